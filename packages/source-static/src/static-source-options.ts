import { z } from 'zod';
import { placeholderNames } from './render-template-text.js';
import { parseUriTemplate } from './uri-template.js';

/** Resource annotations (MCP 2026-07-28, Resources, "Annotations"). */
const annotationsSchema = z.strictObject({
  audience: z.array(z.enum(['user', 'assistant'])).optional(),
  /** 0.0 (least important) to 1.0 (most important). */
  priority: z.number().min(0).max(1).optional(),
  /** ISO 8601, e.g. `2025-01-12T15:00:58Z`. */
  lastModified: z.iso.datetime({ offset: true }).optional(),
});

const iconSchema = z.strictObject({
  src: z.string().min(1),
  mimeType: z.string().min(1).optional(),
  sizes: z.array(z.string().min(1)).optional(),
  theme: z.enum(['light', 'dark']).optional(),
});

/** An absolute URI (RFC 3986 section 4.3: a scheme, then the rest). */
const absoluteUri = z
  .string()
  .min(1)
  .refine((value) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && URL.canParse(value), {
    message: 'must be an absolute URI with a scheme, e.g. test://docs/readme',
  });

/** One resource declared inline: exactly one of `text` or `blob` (base64). */
const staticResourceSchema = z
  .strictObject({
    uri: absoluteUri,
    name: z.string().min(1),
    title: z.string().min(1).optional(),
    description: z.string().optional(),
    mimeType: z.string().min(1).optional(),
    /** Bytes; defaults to the byte length of `text` (UTF-8) or of the decoded `blob`. */
    size: z.number().int().nonnegative().optional(),
    annotations: annotationsSchema.optional(),
    icons: z.array(iconSchema).optional(),
    text: z.string().optional(),
    /** Standard base64 (RFC 4648 section 4) with padding; checked at startup. */
    blob: z.base64('must be valid base64 (RFC 4648, with padding)').optional(),
  })
  .refine((r) => (r.text === undefined) !== (r.blob === undefined), {
    message: 'give exactly one of "text" or "blob"',
  });

/** A template whose reads render `text`, substituting `{{var}}` placeholders. */
const staticTemplateSchema = z
  .strictObject({
    /** RFC 6570 with simple `{var}` expressions, e.g. `test://items/{id}`. */
    uriTemplate: z.string().min(1),
    name: z.string().min(1),
    title: z.string().min(1).optional(),
    description: z.string().optional(),
    mimeType: z.string().min(1).optional(),
    annotations: annotationsSchema.optional(),
    text: z.string(),
  })
  .superRefine((t, ctx) => {
    const parsed = parseUriTemplate(t.uriTemplate);
    if ('error' in parsed) {
      ctx.addIssue({ code: 'custom', path: ['uriTemplate'], message: parsed.error });
      return;
    }
    for (const name of placeholderNames(t.text)) {
      if (!parsed.variables.includes(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['text'],
          message: `placeholder "{{${name}}}" names no variable of the uriTemplate`,
        });
      }
    }
  });

/** Options of a `static` source (the bootstrap entry minus `id` and `type`). */
export const staticSourceOptionsSchema = z.strictObject({
  resources: z
    .array(staticResourceSchema)
    .default([])
    .superRefine((resources, ctx) => {
      const seen = new Set<string>();
      resources.forEach((r, index) => {
        if (seen.has(r.uri)) {
          ctx.addIssue({ code: 'custom', path: [index, 'uri'], message: `duplicate resource uri "${r.uri}"` });
        }
        seen.add(r.uri);
      });
    }),
  templates: z.array(staticTemplateSchema).default([]),
});

/** Validated options of a `static` source, defaults applied. */
export type StaticSourceOptions = z.output<typeof staticSourceOptionsSchema>;
/** A `static` source entry as written in the bootstrap file. */
export type StaticSourceConfig = z.input<typeof staticSourceOptionsSchema>;
/** One inline resource. */
export type StaticResourceOptions = StaticSourceOptions['resources'][number];
/** One inline template. */
export type StaticTemplateOptions = StaticSourceOptions['templates'][number];
