/** Input for one `WWW-Authenticate: Bearer …` challenge. */
export interface BearerChallengeInput {
  /** URL of the protected resource metadata document (RFC 9728 section 5.1). */
  readonly resourceMetadata: string;
  /** Space-delimited scopes needed (RFC 6750 section 3; MCP "Scope Selection Strategy"). */
  readonly scope?: string | undefined;
  /** Absent when the request carried no credentials (RFC 6750 section 3.1). */
  readonly error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request' | undefined;
  readonly errorDescription?: string | undefined;
}

/**
 * The `WWW-Authenticate` value for a 401/403 (RFC 6750 section 3, RFC 9728
 * section 5.1), e.g. `Bearer resource_metadata="https://…", scope="mcp:read"`.
 * Every value is a quoted-string with `"` and `\` escaped (RFC 9110 section
 * 5.6.4) and control or non-ASCII characters replaced, so no input can split
 * the header.
 */
export function bearerChallenge(input: BearerChallengeInput): string {
  const params = [`resource_metadata=${quote(input.resourceMetadata)}`];
  if (input.scope !== undefined && input.scope.trim() !== '') params.push(`scope=${quote(input.scope.trim())}`);
  if (input.error !== undefined) params.push(`error=${quote(input.error)}`);
  if (input.errorDescription !== undefined && input.errorDescription !== '') {
    // RFC 6750 section 3: error_description excludes %x22 and %x5C outright.
    params.push(`error_description=${quote(input.errorDescription.replaceAll('"', "'").replaceAll('\\', '/'))}`);
  }
  return `Bearer ${params.join(', ')}`;
}

function quote(value: string): string {
  const visible = value.replace(/[^\x20-\x7e]/g, '?');
  return `"${visible.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
