import {
  DEFAULT_SOURCE_TTL_MS,
  invalidPosition,
  rangeAdmits,
  type Page,
  type PageRequest,
  type ResourceContents,
  type ResourceDescriptor,
  type ResourceTemplateDescriptor,
  type Source,
  type SourceContext,
} from '@mcpgw/core';
import { renderTemplateText } from './render-template-text.js';
import type { StaticResourceOptions, StaticSourceOptions, StaticTemplateOptions } from './static-source-options.js';
import { matchUriTemplate, parseUriTemplate, type ParsedUriTemplate } from './uri-template.js';

interface PreparedTemplate {
  readonly options: StaticTemplateOptions;
  readonly parsed: ParsedUriTemplate;
  readonly descriptor: ResourceTemplateDescriptor;
}

/**
 * Creates a source serving the resources and templates of `options` from
 * memory. Everything is checked and precomputed here, so reads never fail.
 * Throws when `options` were not validated by `staticSourceOptionsSchema`
 * and a template cannot be parsed.
 */
export function createStaticSource(options: StaticSourceOptions, context: SourceContext): Source {
  const resources = options.resources;
  // Served on every listing as they are: frozen, so no caller can change what the next one is served.
  const descriptors = resources.map((r) => deepFreeze(toDescriptor(r)));
  const byUri = new Map<string, StaticResourceOptions>(resources.map((r) => [r.uri, r]));
  const templates: PreparedTemplate[] = options.templates.map((t, index) => {
    const parsed = parseUriTemplate(t.uriTemplate);
    if ('error' in parsed) {
      throw new Error(`source "${context.sourceId}": templates[${index}].uriTemplate: ${parsed.error}`);
    }
    return { options: t, parsed, descriptor: deepFreeze(toTemplateDescriptor(t)) };
  });

  /** The first template (in declaration order) matching `uri`, with its values. */
  function matchTemplate(uri: string): { template: PreparedTemplate; values: Record<string, string> } | undefined {
    for (const template of templates) {
      const values = matchUriTemplate(template.parsed, uri);
      if (values !== undefined) return { template, values };
    }
    return undefined;
  }

  return {
    id: context.sourceId,
    kind: 'static',
    ttlMs: DEFAULT_SOURCE_TTL_MS,

    async listResources(page: PageRequest): Promise<Page<ResourceDescriptor>> {
      // Position: the index of the next resource, in declaration order.
      let start = 0;
      if (page.position !== undefined) {
        if (!/^(?:0|[1-9][0-9]{0,8})$/.test(page.position)) throw invalidPosition();
        start = Number(page.position);
        if (start > descriptors.length) throw invalidPosition();
      }
      const limit = Math.max(1, Math.floor(page.limit));
      if (page.prefixes === undefined) {
        const end = Math.min(descriptors.length, start + limit);
        const items = descriptors.slice(start, end);
        return end < descriptors.length ? { items, nextPosition: String(end) } : { items };
      }
      // Narrowed to the caller's ranges: the same order and
      // positions, only the resources a range admits (and the caller may
      // see); the page ends where the next such resource would start.
      const ranges = page.ranges ?? page.prefixes.map((prefix) => ({ prefix }));
      const visible = page.visible ?? (() => true);
      const admitted = (d: ResourceDescriptor) => ranges.some((r) => rangeAdmits(r, d.uri)) && visible(d.uri);
      const items: ResourceDescriptor[] = [];
      for (let index = start; index < descriptors.length; index += 1) {
        const descriptor = descriptors[index]!;
        if (!admitted(descriptor)) continue;
        if (items.length === limit) return { items, nextPosition: String(index) };
        items.push(descriptor);
      }
      return { items };
    },

    async listTemplates(): Promise<ResourceTemplateDescriptor[]> {
      return templates.map((t) => t.descriptor);
    },

    owns(uri: string): boolean {
      return byUri.has(uri) || matchTemplate(uri) !== undefined;
    },

    async read(uri: string): Promise<ResourceContents[] | undefined> {
      // A declared resource wins over a template that happens to match it.
      const resource = byUri.get(uri);
      if (resource !== undefined) {
        const mime = resource.mimeType === undefined ? {} : { mimeType: resource.mimeType };
        return resource.blob !== undefined
          ? [{ uri, ...mime, blob: resource.blob }]
          : [{ uri, ...mime, text: resource.text ?? '' }];
      }
      const match = matchTemplate(uri);
      if (match === undefined) return undefined;
      const { mimeType, text } = match.template.options;
      return [
        {
          uri,
          ...(mimeType === undefined ? {} : { mimeType }),
          text: renderTemplateText(text, match.values, mimeType),
        },
      ];
    },

    async health() {
      return { ok: true };
    },

    async close() {},
  };
}

function toDescriptor(r: StaticResourceOptions): ResourceDescriptor {
  const size =
    r.size ?? (r.blob !== undefined ? Buffer.from(r.blob, 'base64').length : Buffer.byteLength(r.text ?? ''));
  return withoutUndefined({
    uri: r.uri,
    name: r.name,
    title: r.title,
    description: r.description,
    mimeType: r.mimeType,
    size,
    icons: r.icons,
    annotations: r.annotations,
  });
}

function toTemplateDescriptor(t: StaticTemplateOptions): ResourceTemplateDescriptor {
  return withoutUndefined({
    uriTemplate: t.uriTemplate,
    name: t.name,
    title: t.title,
    description: t.description,
    mimeType: t.mimeType,
    annotations: t.annotations,
  });
}

/** Drops absent optional fields, so descriptors serialize without `undefined` keys. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** `value` with every object in it frozen. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}
