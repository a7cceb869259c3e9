import type { ClientPolicy } from '@mcpgw/config';
import { CONNECTOR_PRESET_HOSTS } from './connector-presets.js';

/** `clients.metadataDocuments`: `open`, `off`, or an allowlist. */
export type MetadataDocumentPolicy = ClientPolicy['metadataDocuments'];

/**
 * Why the tenant's trust policy refuses the Client ID Metadata Document at
 * `clientId`, or undefined when it may be fetched and used. An allowlist
 * entry is an exact client URL (compared as a string, like the draft
 * compares `client_id` values: draft-ietf-oauth-client-id-metadata-document-02
 * section 4), a host name (exact: no subdomains, no wildcards; any port),
 * or a connector preset (its hosts, see connector-presets.ts).
 * The policies of the draft's section 8.4 ("trust policies"), nothing more.
 */
export function metadataDocumentTrust(policy: MetadataDocumentPolicy): (clientId: string) => string | undefined {
  if (policy === 'open') return () => undefined;
  if (policy === 'off') return () => 'this authorization server does not accept client metadata documents';
  const urls = new Set<string>();
  const hosts = new Set<string>();
  for (const entry of policy.allow) {
    if (typeof entry === 'object') for (const host of CONNECTOR_PRESET_HOSTS[entry.preset]) hosts.add(host);
    else if (entry.includes('://')) urls.add(entry);
    else hosts.add(entry);
  }
  return (clientId) => {
    if (urls.has(clientId)) return undefined;
    const host = URL.parse(clientId)?.hostname;
    if (host !== undefined && hosts.has(host)) return undefined;
    return 'client is not among the clients this authorization server trusts (its administrator allows client metadata documents of listed clients only)';
  };
}
