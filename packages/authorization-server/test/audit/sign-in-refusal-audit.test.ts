import type { RecordedEvent, WriteContext } from '@mcpgw/control-plane';
import type { Logger } from '@mcpgw/core';
import { describe, expect, it } from 'vitest';
import { auditSignInRefusal } from '../../src/audit/attach-audit-trail.js';
import { UpstreamLoginError } from '../../src/interactions/upstream-login.js';

// Which failed upstream sign-ins the tenant's audit log records as `refuse`, and what it keeps of them.
// The record function is the audit log's port: here it keeps what it is given.

const ISSUER = 'https://gateway.example/t/acme/oauth';

function auditor(record?: (context: WriteContext, event: RecordedEvent) => Promise<void>) {
  const written: Array<{ context: WriteContext; event: RecordedEvent }> = [];
  const errors: Array<{ obj: object; msg?: string }> = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn() {},
    error: (obj, msg) => errors.push({ obj, ...(msg === undefined ? {} : { msg }) }),
    child: () => logger,
  };
  const audit = auditSignInRefusal({
    tenantId: 'acme',
    issuer: ISSUER,
    logger,
    record:
      record ??
      (async (context, event) => {
        written.push({ context, event });
      }),
  });
  return { audit, written, errors };
}

const failure = (error: string, reason?: string, description?: string) =>
  new UpstreamLoginError({
    error,
    ...(reason === undefined ? {} : { reason }),
    ...(description === undefined ? {} : { description }),
  });

describe('the refused sign-ins in the audit log', () => {
  it('records a refusal at the identity provider with the client it was for, and no account', () => {
    const { audit, written } = auditor();
    audit(
      failure('access_denied', 'upstream_refused', 'The identity provider refused the sign-in (access_denied).'),
      'app-1',
    );
    expect(written).toEqual([
      {
        context: { actor: { kind: 'client', subject: 'app-1', issuer: ISSUER, clientId: 'app-1' } },
        event: {
          tenantId: 'acme',
          action: 'refuse',
          targetType: 'sign-in',
          targetId: 'app-1',
          before: undefined,
          after: {
            clientId: 'app-1',
            error: 'access_denied',
            reason: 'upstream_refused',
            description: 'The identity provider refused the sign-in (access_denied).',
          },
        },
      },
    ]);
  });

  it('records an ID token that failed its checks and a sign-in with nobody in it, but not an outage or a stale sign-in', () => {
    const { audit, written } = auditor();
    audit(failure('server_error', 'id_token_invalid'), 'app-1');
    audit(failure('access_denied', 'subject_missing'), 'app-1');
    audit(failure('temporarily_unavailable', 'upstream_unreachable'), 'app-1');
    audit(failure('server_error', 'upstream_misconfigured'), 'app-1');
    audit(failure('invalid_request', 'sign_in_expired'), undefined);
    expect(written.map(({ event }) => (event.after as { reason: string }).reason)).toEqual([
      'id_token_invalid',
      'subject_missing',
    ]);
  });

  it('counts a failure that gives no reason as a refusal only when it answers access_denied', () => {
    const { audit, written } = auditor();
    audit(failure('access_denied'), undefined);
    audit(failure('server_error'), undefined);
    expect(written).toHaveLength(1);
    expect(written[0]!.context.actor).toEqual({ kind: 'client', subject: 'unknown', issuer: ISSUER });
    expect(written[0]!.event).toMatchObject({ targetId: 'unknown', after: { clientId: null, reason: null } });
  });

  it('keeps at most 300 characters of the description', () => {
    const { audit, written } = auditor();
    audit(failure('access_denied', 'upstream_refused', 'x'.repeat(5000)), 'app-1');
    expect((written[0]!.event.after as { description: string }).description).toBe('x'.repeat(300));
  });

  it('logs a write that failed, or threw, with the whole event, and never throws into the sign-in', async () => {
    const rejected = auditor(async () => {
      throw new Error('control plane down');
    });
    expect(() => rejected.audit(failure('access_denied', 'upstream_refused'), 'app-1')).not.toThrow();
    const threw = auditor(() => {
      throw new Error('no store');
    });
    expect(() => threw.audit(failure('access_denied', 'upstream_refused'), 'app-2')).not.toThrow();
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (const { errors } of [rejected, threw]) {
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toBe('authorization server: an audit event was not recorded');
      expect(errors[0]!.obj).toMatchObject({ audit: { action: 'refuse', tenantId: 'acme' } });
    }
  });
});
