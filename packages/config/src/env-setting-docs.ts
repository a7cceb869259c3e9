import { z } from 'zod';

/** The groups the environment is documented in, in the order they are shown. */
export const ENV_GROUPS = [
  'Serving',
  'State and secrets',
  'Limits and load shedding',
  'Listen streams',
  'Metrics and traces',
  'Platform operators',
] as const;

export type EnvGroup = (typeof ENV_GROUPS)[number];

/**
 * What an operator reads about one setting, written beside its zod
 * definition in `envSchema`: the environment table of docs/configuration.md
 * and `.env.example` are generated from it (`npm run docs:env`), and a test
 * fails when either differs from what the schema would write. The default a
 * setting takes is read from the schema itself, never written twice.
 */
export interface EnvSettingDoc {
  readonly group: EnvGroup;
  /** Markdown: what the setting does, its syntax and its limits. */
  readonly description: string;
  /** For a setting without a default: what leaving it unset means (Markdown, a few words). */
  readonly unset?: string;
}

/** The documentation of every setting of `envSchema`, keyed by its zod schema. */
export const envSettingDocs = z.registry<EnvSettingDoc>();
