/**
 * `npm run control-plane -- export [--out FILE]` and `npm run control-plane -- import FILE
 * [--key-file PATH]`: the whole control plane (tenants, issuers, sources with their sealed
 * credentials, grants, role bindings, the audit log) as one JSON archive, and back. The store is
 * the one this environment names: Postgres at DATABASE_URL, else the embedded PGlite store under
 * DATA_DIR. Export, then import into a new Postgres database, moves an embedded installation to
 * Postgres; the same pair backs a store up and restores it (docs/operations.md, "Backing up and
 * moving the control plane").
 *
 * The archive holds credentials sealed, never in clear. An import keeps them when they open with
 * this environment's SECRETS_KEY, and seals them again when they open with an earlier key: the
 * exporting store's SECRETS_KEY given as SECRETS_KEY_PREVIOUS, or the `control-plane.key` an
 * embedded store without SECRETS_KEY keeps in its DATA_DIR (`--key-file`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ArchiveError, createSecretBox, exportControlPlane, importControlPlane, resealing } from '@mcpgw/control-plane';
import { ConfigError, readEnv, type EnvConfig } from '@mcpgw/config';
import { sealedCredentialKeys } from '@mcpgw/core';
import { openControlPlaneDatabase, readLocalSealingKey, sealingKeys } from '@mcpgw/tenancy';

export const CONTROL_PLANE_USAGE = `usage: npm run --silent control-plane -- export [--out FILE]
       npm run control-plane -- import FILE [--key-file PATH]

  export     writes the control plane this environment names (DATABASE_URL, else the
             embedded store under DATA_DIR) as one JSON archive, to FILE or stdout
  import     writes an archive into that store, which must be new (migrated, no rows);
             all of it or nothing
  --key-file the control-plane.key of the exporting embedded store (one that ran without
             SECRETS_KEY), so its sealed credentials can be sealed again with this SECRETS_KEY

Stop an embedded gateway before exporting its store (PGlite has one user at a time).

Exit codes: 0 done, 1 refused or failed, 2 usage.
`;

export interface ControlPlaneCliIo {
  readonly env: EnvConfig;
  out(text: string): void;
  err(text: string): void;
}

class UsageError extends Error {}

/** Runs one command line; resolves to the exit code. */
export async function runControlPlaneCli(argv: readonly string[], io: ControlPlaneCliIo): Promise<number> {
  let command: string | undefined;
  let values: { out?: string; 'key-file'?: string; help?: boolean };
  let file: string | undefined;
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { out: { type: 'string' }, 'key-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values;
    [command, file] = parsed.positionals;
    if (values.help === true) {
      io.out(CONTROL_PLANE_USAGE);
      return 0;
    }
    if (command === 'export' && (file !== undefined || values['key-file'] !== undefined)) {
      throw new UsageError('export takes only --out');
    }
    if (command === 'import' && (file === undefined || values.out !== undefined)) {
      throw new UsageError('import takes the archive FILE (and --key-file)');
    }
    if (command !== 'export' && command !== 'import') throw new UsageError('say export or import');
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${CONTROL_PLANE_USAGE}`);
    return 2;
  }

  const where =
    io.env.DATABASE_URL === undefined ? `the embedded store under DATA_DIR ${io.env.DATA_DIR}` : 'DATABASE_URL';
  let opened: Awaited<ReturnType<typeof openControlPlaneDatabase>>;
  try {
    opened = await openControlPlaneDatabase(io.env);
  } catch (error) {
    io.err(`control-plane: cannot open ${where}: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    if (command === 'export') {
      const archive = await exportControlPlane(opened.db);
      const text = `${JSON.stringify(archive, null, 2)}\n`;
      if (values.out === undefined) io.out(text);
      else await writeFile(values.out, text, { mode: 0o600 });
      const counts = Object.entries(archive.tables).map(([table, rows]) => `${table} ${rows.length}`);
      io.err(`# exported ${where} (schema ${archive.schemaVersion}): ${counts.join(', ')}\n`);
      return 0;
    }
    const archive: unknown = JSON.parse(await readFile(file as string, 'utf8'));
    const target = createSecretBox(sealedCredentialKeys(await sealingKeys(io.env)));
    const previous =
      values['key-file'] === undefined
        ? []
        : [createSecretBox(sealedCredentialKeys([await readLocalSealingKey(values['key-file'])]))];
    const report = await importControlPlane(opened.db, archive, { reseal: resealing(target, previous) });
    const counts = Object.entries(report.rows).map(([table, rows]) => `${table} ${rows}`);
    io.err(`# imported into ${where}: ${counts.join(', ')}; ${report.resealed} sources' credentials checked\n`);
    return 0;
  } catch (error) {
    const known = error instanceof ArchiveError || error instanceof SyntaxError || isFileError(error);
    io.err(`control-plane: ${known ? (error as Error).message : String((error as Error)?.stack ?? error)}\n`);
    return 1;
  } finally {
    await opened.db.close();
  }
}

const isFileError = (error: unknown): boolean =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && 'path' in error;

// Run only as the entry point, so tests can import runControlPlaneCli.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let env: EnvConfig;
  try {
    env = readEnv(undefined, process.cwd());
  } catch (error) {
    process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `${String(error)}\n`);
    process.exit(2);
  }
  runControlPlaneCli(process.argv.slice(2), {
    env,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  }).then((code) => process.exit(code));
}
