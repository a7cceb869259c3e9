import type { StoredEntity } from '@mcpgw/control-plane';
import type { EgressGuard, Logger, Source, SourceFactory, SourceFailureReason } from '@mcpgw/core';
import { sourceFailureReason } from '@mcpgw/core';
import { servedSourceEntry } from '@mcpgw/tenancy';

/** Opening, probing and closing a source under test take at most this long together. */
export const CONNECTION_TEST_TIMEOUT_MS = 10_000;

/** What a connection test opens a source with: as serving would. */
export interface ConnectionTestDeps {
  readonly sourceFactories: ReadonlyMap<string, SourceFactory>;
  /** Where relative paths in source options resolve (the bootstrap file's folder). */
  readonly configDir: string;
  /** The egress policy (EGRESS_ALLOW) sources a tenant admin wrote are opened under. */
  readonly egress: EgressGuard;
  readonly logger: Logger;
}

export interface ConnectionTestResult {
  readonly ok: boolean;
  /** When not ok: what to fix, as a class (docs/admin-api.md, "Test connection"). */
  readonly reason?: SourceFailureReason;
  readonly detail?: string;
  readonly elapsedMs: number;
}

/** `text` with every credential value replaced: error messages of drivers may quote what they were given. */
export function scrub(text: string, secrets: Readonly<Record<string, string>>): string {
  let out = text;
  for (const value of Object.values(secrets)) if (value.length > 0) out = out.split(value).join('[redacted]');
  return out;
}

/** The deadline of the whole test passed (reason `timeout`). */
class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  readonly code = 'ETIMEDOUT';
}

function withDeadline<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeadlineError(`no answer within ${CONNECTION_TEST_TIMEOUT_MS / 1000} s`));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Opens a stored source with its registered factory, asks health() and
 * closes it (also when the deadline passes first: a late open is closed as
 * soon as it completes). The source is opened exactly as it is served (the
 * same merge of its credentials, at its type's credential paths only), so
 * a test sends them nowhere serving would not. The answer's detail never
 * holds a credential.
 */
export async function testSourceConnection(
  deps: ConnectionTestDeps,
  tenantId: string,
  entity: StoredEntity,
  secrets: Readonly<Record<string, string>>,
): Promise<ConnectionTestResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const entry = servedSourceEntry(deps.sourceFactories, entity.name, entity.document, secrets);
  const { id: _id, type, ttlMs: _ttl, ...options } = entry;
  const factory = deps.sourceFactories.get(String(type));
  if (factory === undefined)
    return { ok: false, reason: 'unavailable', detail: `unknown source type "${String(type)}"`, elapsedMs: elapsed() };
  const validated = await factory.optionsSchema['~standard'].validate(options);
  if (validated.issues !== undefined) {
    const problems = validated.issues.map(
      (issue) => `${(issue.path ?? []).map(String).join('.') || '(options)'}: ${issue.message}`,
    );
    return {
      ok: false,
      reason: 'unavailable',
      detail: scrub(`invalid options: ${problems.join('; ')}`, secrets),
      elapsedMs: elapsed(),
    };
  }
  const signal = AbortSignal.timeout(CONNECTION_TEST_TIMEOUT_MS);
  const opening = Promise.resolve(
    factory.create(validated.value, {
      sourceId: entity.name,
      tenantId,
      configDir: deps.configDir,
      logger: deps.logger.child({ tenant: tenantId, source: entity.name, component: 'connection-test' }),
      // Probed as it would run: a tenant admin's source under the egress policy.
      ...(entity.writtenBy === 'tenant-admin' ? { egress: deps.egress } : {}),
    }),
  );
  let source: Source | undefined;
  try {
    source = await withDeadline(opening, signal);
    const health = await withDeadline(source.health(signal), signal);
    return {
      ok: health.ok,
      ...(health.ok ? {} : { reason: health.reason ?? 'unavailable' }),
      ...(health.detail === undefined ? {} : { detail: scrub(health.detail, secrets) }),
      elapsedMs: elapsed(),
    };
  } catch (error) {
    return {
      ok: false,
      reason: sourceFailureReason(error),
      detail: scrub((error as Error).message ?? String(error), secrets),
      elapsedMs: elapsed(),
    };
  } finally {
    if (source !== undefined) await source.close().catch(() => undefined);
    // Opened after the deadline: close it once it exists.
    else void opening.then((late) => late.close()).catch(() => undefined);
  }
}
