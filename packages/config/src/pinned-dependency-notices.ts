/**
 * Turns off notices that dependencies print about their own future releases,
 * not about the release installed. The AWS SDK for JavaScript v3 warns on
 * Node < 22 that its releases published after the first week of January 2027
 * will require Node 22; the release this gateway installs is fixed by the
 * lockfile and runs on Node 20, so the notice would only be noise in the
 * operator's log. The SDK's own switch is used, and only when the operator has
 * not set it. Which Node versions the gateway supports is said in
 * docs/operations.md ("Node versions").
 */
export function silencePinnedDependencyNotices(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
