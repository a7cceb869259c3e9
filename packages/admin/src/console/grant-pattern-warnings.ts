import type { Grant } from '@mcpgw/policy';
import { compileGrants } from '@mcpgw/policy';
import type { PreviewWarning } from '../preview-schema.js';
import { findUnmatchedPatterns } from '../preview-pattern-check.js';
import type { TenantRuntimeLease, TenantRuntimeView } from '../tenant-ports.js';

type Acquire = (tenantId: string) => TenantRuntimeLease<TenantRuntimeView> | undefined;

/**
 * The grants page's pattern check: the preview's own check
 * (findUnmatchedPatterns) over every grant the serving runtime has, so a
 * pattern that matches nothing its source lists is flagged where it is
 * edited. Undefined when the tenant is not served (nothing to list).
 */
export async function grantPatternWarnings(
  acquire: Acquire,
  tenantId: string,
  signal: AbortSignal,
): Promise<PreviewWarning[] | undefined> {
  const lease = acquire(tenantId);
  if (lease === undefined) return undefined;
  try {
    const auth = lease.runtime.auth;
    if (auth === undefined) return [];
    return await findUnmatchedPatterns(auth.grants.grants, auth.grants, lease.runtime.catalog.sources, { signal });
  } finally {
    lease.release();
  }
}

/**
 * The same check of one grant being edited, before it is saved: its patterns
 * against the sources the tenant serves now. Undefined when the tenant is not
 * served.
 */
export async function editedGrantWarnings(
  acquire: Acquire,
  tenantId: string,
  grant: Grant,
  signal: AbortSignal,
): Promise<PreviewWarning[] | undefined> {
  const lease = acquire(tenantId);
  if (lease === undefined) return undefined;
  try {
    return await findUnmatchedPatterns([grant], compileGrants([grant]), lease.runtime.catalog.sources, { signal });
  } finally {
    lease.release();
  }
}
