type Json = Record<string, unknown>;

const escape = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const pretty = (value: unknown): string => `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

/** Prose with its Markdown code spans (`like this`) as <code>, the rest escaped. */
const prose = (text: string): string =>
  text
    .split(/(`[^`]+`)/)
    .map((part) => (/^`[^`]+`$/.test(part) ? `<code>${escape(part.slice(1, -1))}</code>` : escape(part)))
    .join('');

/** A schema; alternatives (`anyOf`/`oneOf`) one by one, not as a raw JSON array. */
function schemaHtml(schema: unknown): string {
  const { anyOf, oneOf, ...rest } = (schema ?? {}) as Json & { anyOf?: unknown[]; oneOf?: unknown[] };
  const alternatives = anyOf ?? oneOf;
  if (!Array.isArray(alternatives)) return pretty(schema);
  const shared = Object.keys(rest).length === 0 ? '' : pretty(rest);
  return `${shared}<p>One of:</p><ol>${alternatives.map((item) => `<li>${schemaHtml(item)}</li>`).join('')}</ol>`;
}

type Examples = Record<string, { summary?: string; description?: string; value?: unknown }> | undefined;

function examplesHtml(title: string, examples: Examples): string {
  if (examples === undefined) return '';
  return Object.values(examples)
    .map(
      (example) =>
        `<p><strong>${escape(title)}:</strong> ${prose(String(example.summary ?? ''))}${
          example.description === undefined ? '' : ` (${prose(example.description)})`
        }</p>${pretty(example.value)}`,
    )
    .join('');
}

function operationHtml(path: string, method: string, op: Json): string {
  const parameters = (op.parameters as Json[] | undefined) ?? [];
  const responses = Object.entries(op.responses as Record<string, Json>);
  const body = op.requestBody as { content: Record<string, { schema: unknown; examples?: Examples }> } | undefined;
  const json = body?.content['application/json'];
  const answers = responses.flatMap(([status, r]) =>
    Object.values((r.content as Record<string, { examples?: Examples }> | undefined) ?? {}).map((media) =>
      examplesHtml(`Example answer (${status})`, media.examples),
    ),
  );
  return `<section id="${escape(String(op.operationId))}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
<p><strong>${prose(String(op.summary))}</strong> <em>(${escape(String(op['x-access']))})</em></p>
${op.description === undefined ? '' : `<p>${prose(String(op.description))}</p>`}
${
  parameters.length === 0
    ? ''
    : `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Schema</th></tr>${parameters
        .map(
          (p) =>
            `<tr><td><code>${escape(String(p.name))}</code></td><td>${escape(String(p.in))}</td><td>${p.required === true ? 'yes' : 'no'}</td><td>${escape(JSON.stringify(p.schema))}${p.description === undefined ? '' : `<br>${prose(String(p.description))}`}</td></tr>`,
        )
        .join('')}</table>`
}
${json === undefined ? '' : examplesHtml('Example request', json.examples)}
${json === undefined ? '' : `<details><summary>Request body schema</summary>${schemaHtml(json.schema)}</details>`}
${answers.join('')}
<table><tr><th>Status</th><th>Meaning</th></tr>${responses
    .map(([status, r]) => `<tr><td>${escape(status)}</td><td>${prose(String(r.description))}</td></tr>`)
    .join('')}</table>
</section>`;
}

/**
 * The reference page of the admin API: the OpenAPI document rendered as one
 * self-contained HTML page (no script, no stylesheet or font from elsewhere:
 * it works on a closed network and under a strict Content-Security-Policy).
 */
export function docsPage(document: Json): string {
  const info = document.info as { title: string; description: string };
  const paths = Object.entries(document.paths as Record<string, Record<string, Json>>);
  const operations = paths.flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const toc = operations
    .map(
      ({ path, method, op }) =>
        `<li><a href="#${escape(String(op.operationId))}">${method.toUpperCase()} ${escape(path)}</a></li>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)}</title>
<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.4}
code,pre{font-family:ui-monospace,monospace}pre{background:#f4f4f4;padding:.5rem;overflow:auto}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #ddd;margin-top:1.5rem}.m{font-weight:bold;padding:0 .3rem;border-radius:3px;background:#eee}
</style></head><body>
<h1>${escape(info.title)}</h1><p>${prose(info.description)}</p>
<p>The machine-readable document: <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</p>
<h2>Operations</h2><ul>${toc}</ul>
${operations.map(({ path, method, op }) => operationHtml(path, method, op)).join('\n')}
<h2>Problem details</h2>${pretty((document.components as Json).schemas)}
</body></html>`;
}
