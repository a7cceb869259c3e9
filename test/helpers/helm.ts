import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as renderGoTemplate } from '@evertdespiegeleer/go-template';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

/** What Helm hands a template besides `.Values` (only the fields our chart reads). */
export interface HelmRelease {
  name: string;
  namespace: string;
}

/** A rendered template: its file and the manifests it produced (none when disabled). */
export interface RenderedTemplate {
  template: string;
  text: string;
  manifests: Array<Record<string, unknown>>;
}

/**
 * Renders a chart whose templates use only Go's built-in template functions,
 * with Go's own text/template (compiled to WebAssembly): the same engine and
 * the same result as `helm template` for such a chart, without a helm binary.
 * Like Helm, every template sees the `define`s of `_helpers.tpl`; values
 * overrides merge into values.yaml key by key.
 */
export async function renderChart(
  chartDir: string,
  release: HelmRelease,
  overrides: Record<string, unknown> = {},
): Promise<RenderedTemplate[]> {
  const chart = parseYaml(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as Record<string, string>;
  const values = merge(parseYaml(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as object, overrides);
  const helpers = readFileSync(join(chartDir, 'templates', '_helpers.tpl'), 'utf8');
  const context = {
    Values: values,
    Release: { Name: release.name, Namespace: release.namespace, Service: 'Helm' },
    Chart: { Name: chart.name, Version: chart.version, AppVersion: chart.appVersion },
  };
  const templates = readdirSync(join(chartDir, 'templates'))
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  const rendered: RenderedTemplate[] = [];
  for (const template of templates) {
    const source = readFileSync(join(chartDir, 'templates', template), 'utf8');
    const text = (await renderGoTemplate(helpers + source, context)).trim();
    const manifests = parseAllDocuments(text)
      .map((document) => {
        if (document.errors.length > 0) throw new Error(`${template}: ${document.errors[0]?.message}`);
        return document.toJS() as Record<string, unknown> | null;
      })
      .filter((manifest): manifest is Record<string, unknown> => manifest !== null);
    rendered.push({ template, text, manifests });
  }
  return rendered;
}

function merge(base: object, overrides: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const current = result[key];
    result[key] =
      isPlainObject(current) && isPlainObject(value) ? merge(current, value as Record<string, unknown>) : value;
  }
  return result;
}

function isPlainObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
