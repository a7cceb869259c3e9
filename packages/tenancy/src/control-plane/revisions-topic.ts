/**
 * The replica bus topic of configuration revisions: each message names a
 * tenant whose revision changed in the control plane (the payload of its
 * NOTIFY at commit), or is {@link EVERY_TENANT}.
 */
export function revisionsTopic(namespace = 'mcpgw'): string {
  return `${namespace}:revisions`;
}

/** A revision message asking every replica to compare every tenant once (a relay's signal had a gap). */
export const EVERY_TENANT = '*';
