export { staticSourceFactory } from './static-source-factory.js';
export { createStaticSource } from './static-source.js';
export {
  staticSourceOptionsSchema,
  type StaticResourceOptions,
  type StaticSourceConfig,
  type StaticSourceOptions,
  type StaticTemplateOptions,
} from './static-source-options.js';
export { matchUriTemplate, parseUriTemplate, type ParsedUriTemplate, type UriTemplatePart } from './uri-template.js';
export { isJsonMediaType, renderTemplateText } from './render-template-text.js';
