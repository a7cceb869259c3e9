import type { CONNECTOR_PRESETS } from '@mcpgw/config';

export type ConnectorPreset = (typeof CONNECTOR_PRESETS)[number];

/**
 * The hosts each connector preset of `clients.metadataDocuments.allow`
 * stands for: where the connector publishes its Client ID Metadata Document
 * (its `client_id`). Kept in this one place so a connector that moves its
 * document changes one line.
 *
 * `claude`: Anthropic's Claude publishes its connectors' documents on
 * claude.ai (`https://claude.ai/oauth/mcp-oauth-client-metadata` for
 * claude.ai and Claude Desktop, `https://claude.ai/oauth/claude-code-client-metadata`
 * for Claude Code, as their `client_id`s in authorization requests show);
 * claude.com is Anthropic's other first-party domain for Claude, where the
 * connectors' redirect URIs (`https://claude.com/api/mcp/auth_callback`)
 * already live.
 */
export const CONNECTOR_PRESET_HOSTS: Readonly<Record<ConnectorPreset, readonly string[]>> = {
  claude: ['claude.ai', 'claude.com'],
};
