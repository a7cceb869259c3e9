import { envSchema } from './env.js';
import { ENV_GROUPS, envSettingDocs, type EnvSettingDoc } from './env-setting-docs.js';

/** Where the generated table starts and ends in docs/configuration.md. */
export const ENV_TABLE_START = '<!-- env-table:start (generated from packages/config/src/env.ts: npm run docs:env) -->';
export const ENV_TABLE_END = '<!-- env-table:end -->';

interface DocumentedSetting extends EnvSettingDoc {
  readonly key: string;
  /** The value the schema gives the setting when it is unset; undefined when it has none. */
  readonly defaultValue: unknown;
}

/** Every setting of the schema with its documentation, group by group, in schema order within a group. */
export function documentedSettings(): DocumentedSetting[] {
  const settings = Object.entries(envSchema.shape).map(([key, schema]): DocumentedSetting => {
    const doc = envSettingDocs.get(schema);
    if (doc === undefined) throw new Error(`env setting ${key} has no documentation (envSettingDocs)`);
    const parsed = schema.safeParse(undefined);
    return { key, ...doc, defaultValue: parsed.success ? parsed.data : undefined };
  });
  return ENV_GROUPS.flatMap((group) => settings.filter((setting) => setting.group === group));
}

/** A default as the environment writes it: `8080`, `false`, `a,b`; empty for an empty list. */
function asEnvText(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

function defaultCell(setting: DocumentedSetting): string {
  if (setting.defaultValue === undefined) return setting.unset === undefined ? 'unset' : `unset: ${setting.unset}`;
  const text = asEnvText(setting.defaultValue);
  return text === '' ? 'none' : `\`${text}\``;
}

/** A table cell may hold no `|` nor line break. */
function cell(markdown: string): string {
  return markdown.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/** The environment tables of docs/configuration.md, one per group (Markdown, before formatting). */
export function renderEnvTable(): string {
  const settings = documentedSettings();
  return ENV_GROUPS.map((group) => {
    const rows = settings
      .filter((setting) => setting.group === group)
      .map((setting) => `| \`${setting.key}\` | ${cell(defaultCell(setting))} | ${cell(setting.description)} |`);
    return [`**${group}**`, '', '| key | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
  }).join('\n\n');
}

/** docs/configuration.md with the part between the markers replaced by the generated tables. */
export function withEnvTable(configurationDoc: string): string {
  const start = configurationDoc.indexOf(ENV_TABLE_START);
  const end = configurationDoc.indexOf(ENV_TABLE_END);
  if (start === -1 || end < start)
    throw new Error(`docs/configuration.md lacks the markers ${ENV_TABLE_START} ... ${ENV_TABLE_END}`);
  return `${configurationDoc.slice(0, start + ENV_TABLE_START.length)}\n\n${renderEnvTable()}\n\n${configurationDoc.slice(end)}`;
}

/**
 * Markdown as a plain-text comment reads it: code marks go, and a link becomes
 * its text and the file it points to (descriptions link from docs/configuration.md).
 */
function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_link, text: string, target: string) =>
      /^[a-z][a-z0-9+.-]*:/i.test(target)
        ? `${text} (${target})`
        : `${text} (docs/${target.startsWith('#') ? `configuration.md${target}` : target})`,
    )
    .replaceAll('`', '');
}

/** Words of `text` on lines of at most `width` characters after `# `. */
function commentLines(text: string, width = 98): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((each) => each !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(`# ${line}`);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(`# ${line}`);
  return lines;
}

function sentence(text: string): string {
  const first = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/** The whole of `.env.example`: every setting, its documentation as a comment, and its default. */
export function renderEnvExample(): string {
  const settings = documentedSettings();
  const parts = [
    '# Every setting the gateway reads, generated from packages/config/src/env.ts (npm run docs:env).',
    '# The real environment wins; a .env file in the working directory fills in what it lacks.',
  ];
  for (const group of ENV_GROUPS) {
    parts.push('', `# ---- ${group} ----`);
    for (const setting of settings.filter((each) => each.group === group)) {
      // The table shows what unset means in its own column; a comment says it unless the description does.
      const unset =
        setting.defaultValue === undefined && setting.unset !== undefined && !/\bunset\b/i.test(setting.description)
          ? ` Unset: ${setting.unset}.`
          : '';
      parts.push('', ...commentLines(plain(sentence(setting.description) + unset)));
      parts.push(`${setting.key}=${setting.defaultValue === undefined ? '' : asEnvText(setting.defaultValue)}`);
    }
  }
  return `${parts.join('\n')}\n`;
}
