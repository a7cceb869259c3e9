import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, readEnv } from '@mcpgw/config';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import { demoBootstrap, createSourceRegistry } from '@mcpgw/gateway/testing';
import { parseDockerfile } from '@mcpgw/test-helpers/dockerfile';
import { renderChart, type RenderedTemplate } from '@mcpgw/test-helpers/helm';

// The Helm chart, rendered with Go's text/template (the engine Helm uses) and validated against
// the Kubernetes API schemas of kubernetes-models. infra/kubernetes/mcp-gateway.yaml is the
// default rendering, kept equal to it here (`npx vitest run test/integration/infra-helm -u`
// rewrites it after a chart change).

const CHART = fileURLToPath(new URL('../../infra/helm/mcp-gateway', import.meta.url));
const RELEASE = { name: 'mcp-gateway', namespace: 'default' };
const SECRETS_KEY = 'helm-test-secret-helm-test-secret-helm';
const DATABASE_URL = 'postgres://gateway:helm-test-db-password@postgres:5432/gateway';

const MODELS: Record<string, { new (data: never): { validate(): void } }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are checked structurally below */
type Manifest = Record<string, any>;

function byKind(rendered: RenderedTemplate[]): Record<string, Manifest> {
  const all = rendered.flatMap((t) => t.manifests);
  expect(new Set(all.map((m) => m.kind)).size, 'one manifest per kind').toBe(all.length);
  return Object.fromEntries(all.map((m) => [m.kind as string, m]));
}

function validate(rendered: RenderedTemplate[]): void {
  for (const { template, text, manifests } of rendered) {
    expect(text, template).not.toContain('<no value>');
    for (const manifest of manifests) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      expect(Model, `${template}: a schema for ${manifest.apiVersion} ${manifest.kind}`).toBeDefined();
      expect(() => new (Model as NonNullable<typeof Model>)(manifest as never).validate(), template).not.toThrow();
    }
  }
}

function subsetOf(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe('infra/helm/mcp-gateway', async () => {
  const defaults = await renderChart(CHART, RELEASE);
  const withSecret = await renderChart(CHART, RELEASE, { secret: { values: { SECRETS_KEY } } });
  // Several replicas, as production runs them: a shared database and the autoscaler.
  const shared = await renderChart(CHART, RELEASE, {
    secret: { values: { SECRETS_KEY } },
    database: { url: DATABASE_URL },
    autoscaling: { enabled: true },
  });
  const k = byKind(withSecret);
  const deployment = k.Deployment as Manifest;
  const pod = deployment.spec.template;
  const container = pod.spec.containers[0];
  const env = Object.fromEntries(
    (container.env as Manifest[]).filter((e) => 'value' in e).map((e) => [e.name as string, e.value as string]),
  );

  it('renders manifests that validate against the Kubernetes schemas', () => {
    validate(defaults);
    validate(withSecret);
    validate(shared);
    expect(Object.keys(k).sort()).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Secret', 'Service']);
    expect(Object.keys(byKind(shared)).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Secret',
      'Service',
    ]);
  });

  it('is what infra/kubernetes/mcp-gateway.yaml holds', async () => {
    const text = defaults
      .filter((t) => t.manifests.length > 0)
      .map((t) => `# Source: mcp-gateway/templates/${t.template}\n${t.text}\n`)
      .join('---\n');
    const header =
      '# Rendered from infra/helm/mcp-gateway with its default values (release "mcp-gateway").\n' +
      '# Do not edit: change the chart, then `npx vitest run test/integration/infra-helm -u`.\n' +
      '# The Secret has no SECRETS_KEY: add one (or create the Secret yourself) before applying.\n';
    await expect(header + text).toMatchFileSnapshot('../../infra/kubernetes/mcp-gateway.yaml');
  });

  it('selects its own pods from the Service, the PodDisruptionBudget and the Deployment', () => {
    const labels = pod.metadata.labels as Record<string, string>;
    expect(subsetOf(deployment.spec.selector.matchLabels, labels)).toBe(true);
    expect(subsetOf(k.Service?.spec.selector, labels)).toBe(true);
    expect(subsetOf(k.PodDisruptionBudget?.spec.selector.matchLabels, labels)).toBe(true);
    expect(k.Service?.spec.ports[0].targetPort).toBe(container.ports[0].name);
    const hpa = byKind(shared).HorizontalPodAutoscaler;
    expect(hpa?.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(hpa?.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(k.PodDisruptionBudget?.spec.maxUnavailable).toBe(1);
  });

  it('probes liveness on /healthz and readiness on /readyz, and drains before SIGTERM', () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.ports[0].containerPort).toBe(Number(env.PORT));
    expect(container.lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(5);
  });

  it('runs non-root on a read-only root with no capabilities and RuntimeDefault seccomp', () => {
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    // The image's own user is the one the pod asks for.
    const dockerfile = readFileSync(new URL('../../infra/Dockerfile', import.meta.url), 'utf8');
    const user = parseDockerfile(dockerfile)
      .at(-1)
      ?.instructions.filter((i) => i.keyword === 'USER')
      .at(-1)?.args;
    expect(user).toBe(`${pod.spec.securityContext.runAsUser}:${pod.spec.securityContext.runAsGroup}`);
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    for (const kind of ['requests', 'limits']) {
      expect(Object.keys(container.resources[kind]).sort(), kind).toEqual(['cpu', 'memory']);
    }
  });

  it('gives DATA_DIR and /tmp their own emptyDir and mounts the bootstrap file read-only', () => {
    const volumes = Object.fromEntries((pod.spec.volumes as Manifest[]).map((v) => [v.name as string, v]));
    const mountAt = (path: string) => (container.volumeMounts as Manifest[]).find((m) => m.mountPath === path);
    for (const path of [env.DATA_DIR, '/tmp']) {
      expect(volumes[mountAt(path as string)?.name]?.emptyDir, path).toBeDefined();
    }
    const config = (container.volumeMounts as Manifest[]).find((m) =>
      (env.GATEWAY_CONFIG as string).startsWith(`${m.mountPath}/`),
    );
    expect(config?.readOnly).toBe(true);
    expect(volumes[config?.name]?.configMap.name).toBe(k.ConfigMap?.metadata.name);
    expect(Object.keys(k.ConfigMap?.data)).toContain(
      (env.GATEWAY_CONFIG as string).slice(config?.mountPath.length + 1),
    );
  });

  it('takes SECRETS_KEY and the other secret variables from the Secret', () => {
    const secretName = k.Secret?.metadata.name;
    expect(container.env.find((e: Manifest) => e.name === 'SECRETS_KEY').valueFrom.secretKeyRef).toEqual({
      name: secretName,
      key: 'SECRETS_KEY',
    });
    expect(container.envFrom).toEqual([{ secretRef: { name: secretName } }]);
    expect(k.Secret?.stringData).toEqual({ SECRETS_KEY });
  });

  it('reads METRICS_TOKEN from a Secret key, never from a plain value', async () => {
    const tokenRef = (manifest: Manifest) =>
      (manifest.spec.template.spec.containers[0].env as Manifest[]).find((e) => e.name === 'METRICS_TOKEN');
    const fromDefaults = byKind(defaults);
    expect(tokenRef(fromDefaults.Deployment as Manifest)).toEqual({
      name: 'METRICS_TOKEN',
      valueFrom: { secretKeyRef: { name: fromDefaults.Secret?.metadata.name, key: 'METRICS_TOKEN', optional: true } },
    });
    // By default no token is written anywhere in the manifests: not as a variable, not in the Secret.
    for (const template of defaults) expect(template.text, template.template).not.toMatch(/METRICS_TOKEN\s*:/);
    expect(fromDefaults.Secret?.stringData).toBeUndefined();

    const token = 'scrape-token-scrape-token-scrape-token';
    const inSecret = byKind(
      await renderChart(CHART, RELEASE, { secret: { values: { SECRETS_KEY, METRICS_TOKEN: token } } }),
    );
    expect(inSecret.Secret?.stringData).toEqual({ SECRETS_KEY, METRICS_TOKEN: token });
    expect(JSON.stringify(inSecret.Deployment)).not.toContain(token);
    expect(tokenRef(inSecret.Deployment as Manifest)?.valueFrom.secretKeyRef.name).toBe(inSecret.Secret?.metadata.name);

    const elsewhere = await renderChart(CHART, RELEASE, {
      metricsToken: { existingSecret: 'prometheus-scrape', key: 'token', optional: false },
    });
    validate(elsewhere);
    expect(tokenRef(byKind(elsewhere).Deployment as Manifest)?.valueFrom.secretKeyRef).toEqual({
      name: 'prometheus-scrape',
      key: 'token',
      optional: false,
    });
  });

  it('ships a bootstrap file that loads with the pod’s environment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-helm-'));
    try {
      const file = join(dir, 'gateway.yaml');
      await writeFile(file, k.ConfigMap?.data['gateway.yaml']);
      const config = await loadConfig({
        registry: createSourceRegistry(),
        defaultBootstrap: demoBootstrap(),
        env: { ...env, SECRETS_KEY, GATEWAY_CONFIG: file },
      });
      expect(config.env.HOST).toBe('0.0.0.0');
      expect(config.tenants.map((t) => t.id)).toEqual(['example']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('uses an existing Secret, a fixed replica count, extra variables and a numeric image tag when told to', async () => {
    const rendered = await renderChart(CHART, RELEASE, {
      secret: { existingSecret: 'gateway-secrets' },
      database: { existingSecret: 'gateway-secrets' },
      autoscaling: { enabled: false },
      replicaCount: 3,
      env: { WAREHOUSE_SCHEMA: 'finance' },
      // What `--set image.tag=1.2` gives: a number, not a string.
      image: { tag: 1.2 },
    });
    validate(rendered);
    const kinds = byKind(rendered);
    expect(Object.keys(kinds)).not.toContain('Secret');
    expect(Object.keys(kinds)).not.toContain('HorizontalPodAutoscaler');
    const spec = kinds.Deployment?.spec;
    expect(spec.replicas).toBe(3);
    const c = spec.template.spec.containers[0];
    expect(c.envFrom).toEqual([{ secretRef: { name: 'gateway-secrets' } }]);
    expect(c.env).toContainEqual({ name: 'WAREHOUSE_SCHEMA', value: 'finance' });
    expect(c.image).toBe('mcp-resource-gateway:1.2');
  });

  it('names the operators’ identity provider only when values set it, and the example admin sign-in loads', async () => {
    const operatorNames = (rendered: RenderedTemplate[]) =>
      (byKind(rendered).Deployment?.spec.template.spec.containers[0].env as Manifest[])
        .map((v) => v.name as string)
        .filter((name) => name.startsWith('OPERATOR_'));
    expect(operatorNames(withSecret)).toEqual([]);
    const operator = {
      issuer: 'https://login.example.com/realms/platform',
      jwksUri: 'https://login.example.com/realms/platform/protocol/openid-connect/certs',
      roleClaim: 'realm_access.roles',
    };
    const withOperator = await renderChart(CHART, RELEASE, { secret: { values: { SECRETS_KEY } }, operator });
    validate(withOperator);
    const variables = byKind(withOperator).Deployment?.spec.template.spec.containers[0].env as Manifest[];
    const env = Object.fromEntries(variables.filter((v) => 'value' in v).map((v) => [v.name, v.value]));
    expect(operatorNames(withOperator)).toEqual(['OPERATOR_ISSUER', 'OPERATOR_JWKS_URI', 'OPERATOR_ROLE_CLAIM']);
    const parsed = readEnv({ ...env, SECRETS_KEY });
    expect([parsed.OPERATOR_ISSUER, parsed.OPERATOR_JWKS_URI, parsed.OPERATOR_ROLE_CLAIM]).toEqual([
      operator.issuer,
      operator.jwksUri,
      operator.roleClaim,
    ]);
    // The commented admin sign-in example of values.yaml, uncommented, is a valid bootstrap file.
    const values = readFileSync(join(CHART, 'values.yaml'), 'utf8');
    const bootstrap = (/^bootstrap: \|\n((?: {2}.*\n|\n)*)/m.exec(values)?.[1] ?? '')
      .replace(/^ {2}/gm, '')
      .replace(/^( {4})# (?=adminRoleBindings:|adminSignIn:| )/gm, '$1');
    expect(bootstrap).toContain('adminSignIn:');
    const dir = await mkdtemp(join(tmpdir(), 'gw-helm-sign-in-'));
    try {
      await writeFile(join(dir, 'gateway.yaml'), bootstrap);
      const config = await loadConfig({
        registry: createSourceRegistry(),
        defaultBootstrap: demoBootstrap(),
        env: { ...env, SECRETS_KEY, GATEWAY_CONFIG: join(dir, 'gateway.yaml'), DATA_DIR: dir },
      });
      expect(config.tenants[0]?.adminSignIn?.clientId).toBe('mcpgw-admin');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('by default runs one replica, alone on purpose on its own store, that a drain can move', () => {
    const fromDefaults = byKind(defaults);
    const spec = fromDefaults.Deployment?.spec;
    expect(spec.replicas).toBe(1);
    expect(Object.keys(fromDefaults)).not.toContain('HorizontalPodAutoscaler');
    const variables = spec.template.spec.containers[0].env as Manifest[];
    // What the gateway needs to start off loopback without a shared database (docs/configuration.md).
    expect(variables).toContainEqual({ name: 'SINGLE_REPLICA', value: 'true' });
    expect(variables.map((v) => v.name)).not.toContain('DATABASE_URL');
    // No Redis named that the default install does not bring: one replica caches in its memory.
    expect(variables.map((v) => v.name)).not.toContain('REDIS_URL');
    // A budget that leaves no pod to evict would block every drain of the node it runs on.
    expect(fromDefaults.PodDisruptionBudget?.spec.maxUnavailable).toBeGreaterThanOrEqual(spec.replicas);
  });

  it.each([
    ['replicaCount: 2', { replicaCount: 2 }],
    ['replicaCount: "3" (--set-string)', { replicaCount: '3' }],
    ['autoscaling.enabled', { autoscaling: { enabled: true } }],
  ])('refuses to render %s without a shared database, saying why', async (_name, values) => {
    const rendering = renderChart(CHART, RELEASE, values);
    await expect(rendering).rejects.toThrow(
      'mcp-gateway REFUSES more than one replica (replicaCount above 1, or autoscaling.enabled) without ' +
        'database.url or database.existingSecret - replicas must share one control-plane database',
    );
    validate(await renderChart(CHART, RELEASE, { ...values, database: { existingSecret: 'control-plane' } }));
  });

  it('takes the database URL into its Secret, never the Deployment, or a key of a Secret you manage', async () => {
    const fromUrl = byKind(shared);
    const variables = fromUrl.Deployment?.spec.template.spec.containers[0].env as Manifest[];
    expect(variables.find((v) => v.name === 'DATABASE_URL')).toEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: fromUrl.Secret?.metadata.name, key: 'DATABASE_URL' } },
    });
    expect(variables.map((v) => v.name)).not.toContain('SINGLE_REPLICA');
    expect(fromUrl.Secret?.stringData).toEqual({ SECRETS_KEY, DATABASE_URL });
    expect(JSON.stringify(fromUrl.Deployment)).not.toContain('helm-test-db-password');

    const fromSecret = byKind(
      await renderChart(CHART, RELEASE, {
        database: { existingSecret: 'control-plane', key: 'url' },
        replicaCount: 2,
      }),
    );
    const reference = (fromSecret.Deployment?.spec.template.spec.containers[0].env as Manifest[]).find(
      (v) => v.name === 'DATABASE_URL',
    );
    expect(reference?.valueFrom.secretKeyRef).toEqual({ name: 'control-plane', key: 'url' });
    expect(fromSecret.Deployment?.spec.replicas).toBe(2);

    for (const [values, rule] of [
      [{ database: { url: DATABASE_URL, existingSecret: 'control-plane' } }, 'together with database.existingSecret'],
      [{ database: { url: DATABASE_URL }, secret: { existingSecret: 'mine' } }, 'with secret.existingSecret'],
      [{ database: { url: DATABASE_URL }, secret: { values: { DATABASE_URL } } }, 'beside database.url'],
    ] as const) {
      await expect(renderChart(CHART, RELEASE, values), rule).rejects.toThrow(rule);
    }
  });

  it('mounts extra volumes where the values say, e.g. the folder of a files source', async () => {
    const rendered = await renderChart(CHART, RELEASE, {
      extraVolumes: [
        { name: 'handbook', persistentVolumeClaim: { claimName: 'handbook', readOnly: true } },
        {
          name: 'ca',
          configMap: { name: 'corporate-ca', defaultMode: 292, items: [{ key: 'ca: "root"', path: 'ca.pem' }] },
        },
      ],
      extraVolumeMounts: [
        { name: 'handbook', mountPath: '/srv/handbook', readOnly: true },
        { name: 'ca', mountPath: '/etc/ssl/corporate', readOnly: true },
      ],
    });
    validate(rendered);
    const pod = byKind(rendered).Deployment?.spec.template.spec;
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        { name: 'handbook', persistentVolumeClaim: { claimName: 'handbook', readOnly: true } },
        {
          name: 'ca',
          configMap: { name: 'corporate-ca', defaultMode: 292, items: [{ key: 'ca: "root"', path: 'ca.pem' }] },
        },
      ]),
    );
    expect(pod.containers[0].volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'handbook', mountPath: '/srv/handbook', readOnly: true },
        { name: 'ca', mountPath: '/etc/ssl/corporate', readOnly: true },
        { name: 'data', mountPath: '/data' },
      ]),
    );
  });

  it('refuses a manifest that breaks the schema (the validation is not a no-op)', () => {
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(() => new Deployment(broken as never).validate()).toThrow(/containerPort/);
  });
});
