import type { JsonRpcMessage } from './envelope.js';
import { isPlainObject } from './envelope.js';
import { GatewayError } from '@mcpgw/core';
import type { LegacyVersion, ModernVersion } from './versions.js';
import { HEADERLESS_LEGACY_VERSION, SUPPORTED_VERSIONS, isLegacyVersion, isModernVersion } from './versions.js';

export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

export type Era = { era: 'modern'; version: ModernVersion } | { era: 'legacy'; version: LegacyVersion };

/**
 * Chooses the era a request is served in (2026-07-28 basic/versioning,
 * "A dual-era server selects its behavior from how the client opens"):
 * - an `MCP-Protocol-Version` header names the version outright; an unknown
 *   one is refused with -32022;
 * - no header but modern `_meta` is a modern client that forgot the required
 *   header: -32020;
 * - no header at all is the legacy era: `initialize`, or a pre-2025-06-18
 *   client served as 2025-03-26.
 */
export function selectEra(headerVersion: string | undefined, message: JsonRpcMessage): Era {
  if (headerVersion !== undefined) {
    if (isModernVersion(headerVersion)) return { era: 'modern', version: headerVersion };
    if (isLegacyVersion(headerVersion)) return { era: 'legacy', version: headerVersion };
    throw new GatewayError('MCPGW_PROTOCOL_VERSION_UNSUPPORTED', [headerVersion, SUPPORTED_VERSIONS.join(', ')], {
      data: { supported: [...SUPPORTED_VERSIONS], requested: headerVersion },
    });
  }
  const meta = message.params._meta;
  if (isPlainObject(meta) && PROTOCOL_VERSION_META in meta) {
    throw new GatewayError('MCPGW_HEADER_MISMATCH', 'the MCP-Protocol-Version header is required and must match _meta');
  }
  return { era: 'legacy', version: HEADERLESS_LEGACY_VERSION };
}
