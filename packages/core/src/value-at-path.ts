/**
 * The value at a dotted path of nested objects (`connection.password`,
 * `realm_access.roles`), or undefined. Own properties only, and never through
 * an array: a path names object members, so `__proto__`, `constructor` or an
 * index cannot reach anything the document does not itself hold.
 */
export function valueAtPath(root: unknown, path: string): unknown {
  let node: unknown = root;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
