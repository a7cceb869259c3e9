import fastifyPlugin from 'fastify-plugin';

/**
 * RFC 9728 protected resource metadata, one document per tenant at
 * `/.well-known/oauth-protected-resource/t/{tenant}/mcp` (the well-known
 * segment inserted before the resource path, section 3.1). It lists only that
 * tenant's authorization servers. Anonymous tenants have none: 404.
 * The document depends on the Host header (loopback names), hence `Vary`.
 */
export const wellKnownPlugin = fastifyPlugin(
  async (app) => {
    const tenants = app.tenants.serving;
    const { baseUrlOf } = app.settings;
    app.get<{ Params: { tenant: string } }>(
      '/.well-known/oauth-protected-resource/t/:tenant/mcp',
      async (request, reply) => {
        const auth = tenants.get(request.params.tenant)?.auth;
        if (auth === undefined)
          return reply.code(404).send({ error: 'not_found', error_description: 'No protected resource here' });
        // Public metadata, fetched by browser-based clients too.
        return (
          reply
            .header('access-control-allow-origin', '*')
            .header('cache-control', 'public, max-age=300')
            .header('vary', 'host')
            // RFC 9728 §3.3: `resource` is the URL the client used, under whichever loopback name it typed.
            .send(auth.metadataFor(baseUrlOf(request.headers.host)))
        );
      },
    );
  },
  { name: 'mcpgw-well-known', dependencies: ['mcpgw-settings', 'mcpgw-tenants'], encapsulate: true },
);
