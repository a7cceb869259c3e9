import { protectedResourceMetadata } from '@mcpgw/auth';
import type { FastifyInstance } from 'fastify';
import type { TenantRegistry, TenantRuntime } from '@mcpgw/tenancy';
import { ADMIN_PREFIX, operatorResource, tenantAdminResource } from '@mcpgw/admin';

export interface AdminMetadataOptions {
  readonly baseUrl: string;
  readonly tenants: TenantRegistry<TenantRuntime>;
  readonly operator: { readonly issuer: string; readonly audience: string } | undefined;
}

/**
 * RFC 9728 section 3: the protected resource metadata of the admin
 * resources, at the well-known prefix followed by the resource's path, so a
 * client learns which authorization server issues tokens for each: the
 * operators' issuer for `/admin/v1`, a tenant's own issuers for its
 * `/admin/v1/tenants/{tenantId}`.
 */
export function registerAdminMetadataRoutes(app: FastifyInstance, options: AdminMetadataOptions): void {
  const wellKnown = `/.well-known/oauth-protected-resource${ADMIN_PREFIX}`;
  // Served without an operator issuer too: the 401 of an operator route points here.
  const operatorDocument = protectedResourceMetadata({
    resource: options.operator?.audience ?? operatorResource(options.baseUrl),
    authorizationServers: options.operator === undefined ? [] : [options.operator.issuer],
    scopesSupported: [],
  });
  app.get(wellKnown, async (_request, reply) => reply.type('application/json').send(operatorDocument));
  app.get<{ Params: { tenantId: string } }>(`${wellKnown}/tenants/:tenantId`, async (request, reply) => {
    const runtime = options.tenants.serving.get(request.params.tenantId);
    const issuers = runtime?.config.auth?.issuers;
    if (runtime === undefined || issuers === undefined) {
      return reply.code(404).type('application/json').send({ error: 'not_found' });
    }
    // The tenant's hosted issuer first (docs/adr/0011); `{ "development": true }` is that one.
    const hosted = runtime.hostedIssuer?.issuer;
    const authorizationServers = [
      ...(hosted === undefined ? [] : [hosted]),
      ...issuers.map((entry) => ('development' in entry ? '' : (entry.authorizationServer ?? entry.issuer))),
    ];
    return reply.type('application/json').send(
      protectedResourceMetadata({
        resource: tenantAdminResource(options.baseUrl, runtime.config.id),
        authorizationServers: [...new Set(authorizationServers)].filter((server) => server !== ''),
        scopesSupported: [],
        resourceName: `${runtime.config.name} (admin)`,
      }),
    );
  });
}
