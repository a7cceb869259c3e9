/**
 * `npm run admin -- preview --tenant ID (--claims JSON | --token TOKEN)`: the
 * admin API's "preview as" for operators (and tenant admins) at a terminal. It only calls the
 * admin API over HTTP (`POST /admin/v1/tenants/{id}/preview`) with an
 * admin bearer token, and prints a summary (or the JSON answer).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { readAdminToken, readEnv } from '@mcpgw/config';
import type { PreviewResponse } from '@mcpgw/admin';
import { publicBaseUrl } from '@mcpgw/tenancy';

export const ADMIN_USAGE = `usage: npm run admin -- preview --tenant ID (--claims JSON | --token TOKEN) [options]

Shows what an MCP caller of the tenant would see: the grants that match it,
its principal fingerprint (as in the access log), the first page of
resources/list, and warnings for grant patterns that match nothing in their
source. It asks a running gateway's admin API; nothing is changed, and nothing is
cached for the previewed caller.

  --tenant ID          the tenant to preview
  --claims JSON        the caller's token claims, e.g. '{"sub":"alice","scope":"mcp:read"}'
  --issuer URL         with --claims: which of the tenant's issuers maps them (needed when it trusts several)
  --token TOKEN        an access token of the tenant's issuer, verified for real ('-' reads it from stdin)
  --url URL            the gateway (default: PUBLIC_URL, else http://HOST:PORT of this environment)
  --admin-token TOKEN  an admin API bearer token: an operator's, or a tenant admin's for their own tenant
                       (default: the ADMIN_TOKEN environment variable; prefer the variable: command
                       lines are visible to other users)
  --json               print the admin API's JSON answer as it is

Exit codes: 0 answered, 1 the gateway refused or could not be reached, 2 usage.
`;

export interface AdminCliIo {
  /** The gateway when --url is absent. */
  defaultUrl: () => string;
  /** The admin bearer token when --admin-token is absent. */
  adminToken: string | undefined;
  readStdin: () => string;
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs one command line; resolves to the exit code. */
export async function runAdminCli(argv: readonly string[], io: AdminCliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        tenant: { type: 'string' },
        claims: { type: 'string' },
        issuer: { type: 'string' },
        token: { type: 'string' },
        url: { type: 'string' },
        'admin-token': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    io.out(ADMIN_USAGE);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'preview') {
    return usage(io, positionals.length === 0 ? 'name a command' : `unknown command '${positionals.join(' ')}'`);
  }
  if (values.tenant === undefined || values.tenant === '') return usage(io, '--tenant is required');
  if ((values.claims === undefined) === (values.token === undefined)) {
    return usage(io, 'give exactly one of --claims or --token');
  }
  const adminToken = values['admin-token'] ?? io.adminToken;
  if (adminToken === undefined) return usage(io, 'no admin token: set ADMIN_TOKEN or pass --admin-token');
  let body: Record<string, unknown>;
  if (values.claims !== undefined) {
    let claims: unknown;
    try {
      claims = JSON.parse(values.claims);
    } catch (error) {
      return usage(io, `--claims is not JSON: ${(error as Error).message}`);
    }
    body = { claims, ...(values.issuer === undefined ? {} : { issuer: values.issuer }) };
  } else {
    body = { token: values.token === '-' ? io.readStdin().trim() : values.token };
  }

  const base = (values.url ?? io.defaultUrl()).replace(/\/+$/, '');
  const url = `${base}/admin/v1/tenants/${encodeURIComponent(values.tenant)}/preview`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${adminToken}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify(body),
    });
  } catch (error) {
    io.err(`admin: cannot reach ${base}: ${String((error as Error).cause ?? (error as Error).message)}\n`);
    return 1;
  }
  const text = await response.text();
  if (!response.ok) {
    io.err(describeProblem(response.status, text));
    return 1;
  }
  io.out(values.json === true ? `${text}\n` : summarize(JSON.parse(text) as PreviewResponse));
  return 0;
}

function usage(io: AdminCliIo, message: string): number {
  io.err(`admin: ${message}\n\n${ADMIN_USAGE}`);
  return 2;
}

/** An RFC 9457 problem (or whatever came back) as lines for the terminal. */
function describeProblem(status: number, text: string): string {
  let problem: { title?: string; detail?: string; errors?: Array<{ pointer?: string; detail?: string }> } = {};
  try {
    problem = JSON.parse(text) as typeof problem;
  } catch {
    return `admin: HTTP ${status}: ${text.slice(0, 500)}\n`;
  }
  const lines = [`admin: HTTP ${status} ${problem.title ?? ''}: ${problem.detail ?? ''}`];
  for (const error of problem.errors ?? []) lines.push(`  ${error.pointer ?? ''}: ${error.detail ?? ''}`);
  return `${lines.join('\n')}\n`;
}

/** The answer as a person reads it: who, admitted or not, grants, resources, warnings. */
export function summarize(preview: PreviewResponse): string {
  const lines: string[] = [];
  const who = preview.principal;
  lines.push(
    who === undefined
      ? `Tenant ${preview.tenantId} is anonymous: every caller sees every resource.`
      : `Tenant ${preview.tenantId}, as ${who.subject} of ${who.issuer} (from ${preview.from})`,
  );
  if (who !== undefined) {
    lines.push(`  scopes: ${who.scopes.join(' ') || '(none)'}; groups: ${who.groups.join(' ') || '(none)'}`);
    lines.push(`  fingerprint in the access log (tenantPrincipal): ${preview.principalFingerprint ?? '?'}`);
  }
  lines.push(
    preview.admitted
      ? 'Admitted: yes'
      : `Admitted: NO, an MCP request is refused (403): missing required scopes ${(preview.missingScopes ?? []).join(' ')}`,
  );
  lines.push(`Grants matched: ${preview.grants.matched.map((grant) => grant.name).join(', ') || '(none)'}`);
  if (preview.grants.unmatched.length > 0) lines.push(`Grants not matched: ${preview.grants.unmatched.join(', ')}`);
  const { items, hasMore, unavailableSources, incompleteSources } = preview.resources;
  lines.push(`Resources, first page: ${items.length}${hasMore ? ' (more pages follow)' : ''}`);
  for (const item of items) lines.push(`  ${item.uri}  ${item.title ?? item.name}`);
  if (unavailableSources.length > 0) lines.push(`Unavailable sources (skipped): ${unavailableSources.join(', ')}`);
  if (incompleteSources.length > 0) lines.push(`Incomplete sources: ${incompleteSources.join(', ')}`);
  if (preview.warnings.length > 0) {
    lines.push('Warnings:');
    for (const warning of preview.warnings) {
      lines.push(`  ! grant ${warning.grant}, source ${warning.source}: ${warning.message}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

// Run only as the entry point, so tests can call runAdminCli against a test gateway.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runAdminCli(process.argv.slice(2), {
    defaultUrl: () => publicBaseUrl(readEnv(undefined, process.cwd())),
    adminToken: readAdminToken(),
    readStdin: () => readFileSync(0, 'utf8'),
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`admin: ${String((error as Error)?.stack ?? error)}\n`);
      process.exit(1);
    },
  );
}
