/**
 * Whether an SDK error means "no such object": NoSuchKey from GetObject,
 * NotFound from HEAD requests, or a bare 404. NoSuchBucket is also a 404 but
 * a configuration fault, so it is not "not found".
 */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'NoSuchKey' || error.name === 'NotFound') return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === 404 && error.name !== 'NoSuchBucket';
}

/** Whether an SDK error is S3 refusing the request's credentials what they asked for (403 AccessDenied). */
export function isAccessDenied(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return error.name === 'AccessDenied' || (status === 403 && error.name === 'Forbidden');
}
