/**
 * Checks compose.yaml against the processes it runs, without Docker: each app service's
 * environment must be exactly what that process's config schema knows and must load, the gateway
 * must reach the services by their compose names and ports, and start order must wait for health.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import type { z } from "zod";
import { ConfigSchema as GatewaySchema } from "@printshop/gateway/config";
import { type Cidr, cidrMatcher, inCidr, parseCidr, parseIp } from "@printshop/gateway/domain/cidr";
import { ConfigSchema as QuotesSchema } from "@printshop/quotes/config";
import { ConfigSchema as CatalogueSchema } from "@printshop/catalogue/config";
import { ConfigSchema as CrmSchema } from "@printshop/crm/config";
import { ConfigSchema as ProofsSchema } from "@printshop/proofs/config";
import { ConfigSchema as WebhooksSchema } from "@printshop/webhooks/config";
import { loadConfig } from "@printshop/shared/config";
import { ROLES } from "@printshop/shared/db/tenancy";
import { RECOMMENDED_TRACE_SAMPLE, RUNTIME_TELEMETRY_VARIABLES } from "@printshop/shared/telemetry";
import { ConfigSchema as DbRolesSchema } from "./scripts/db_roles.ts";

const ROOT = new URL("./", import.meta.url);

const SERVICES = ["quotes", "catalogue", "crm", "proofs", "webhooks"] as const;
type ServiceName = typeof SERVICES[number];
type AppName = ServiceName | "gateway";
const APPS: readonly AppName[] = [...SERVICES, "gateway"];

const SCHEMAS: Record<AppName, z.ZodObject> = {
  gateway: GatewaySchema,
  quotes: QuotesSchema,
  catalogue: CatalogueSchema,
  crm: CrmSchema,
  proofs: ProofsSchema,
  webhooks: WebhooksSchema,
};

/** The gateway variable that holds each service's base URL. */
const GATEWAY_URL_VARS: Record<ServiceName, string> = {
  quotes: "QUOTES_URL",
  catalogue: "CATALOGUE_URL",
  crm: "CRM_URL",
  proofs: "PROOFS_URL",
  webhooks: "WEBHOOKS_URL",
};

/** Workspace folder of each process, where its main.ts and migrations live. */
const MEMBER_DIRS: Record<AppName, string> = {
  gateway: "gateway",
  quotes: "services/quotes",
  catalogue: "services/catalogue",
  crm: "services/crm",
  proofs: "services/proofs",
  webhooks: "services/webhooks",
};

/** The secrets compose must refuse to start without. */
const REQUIRED_SECRETS = [
  "POSTGRES_PASSWORD",
  "DATABASE_ROLE_PASSWORD",
  "INTERNAL_SECRET",
  "PLATFORM_ADMIN_TOKEN",
  "WEBHOOK_SECRETS_KEY",
];

interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string; target?: string };
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: unknown;
  healthcheck?: Healthcheck;
  depends_on?: string[] | Record<string, { condition?: string }>;
  ports?: (string | number | { target: number; published?: string | number })[];
  volumes?: (string | { source?: string; target: string })[];
  networks?: Record<string, { ipv4_address?: string } | null>;
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, { ipam?: { config?: { subnet?: string }[] } }>;
}

type Env = Record<string, string | undefined>;

// --- compose interpolation ----------------------------------------------------------------

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Thrown where compose itself would stop with "required variable … is missing a value". */
class MissingVariableError extends Error {
  override name = "MissingVariableError";
}

/**
 * Resolves compose interpolation in one string the way `docker compose` does: `$$`, `$VAR`,
 * `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}`,
 * `${VAR:+alt}`, `${VAR+alt}`, with nested interpolation in the default, message or alt.
 */
function interpolate(text: string, env: Env): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch !== "$") {
      out += ch;
      i++;
      continue;
    }
    const next = text[i + 1];
    if (next === "$") {
      out += "$";
      i += 2;
    } else if (next === "{") {
      const end = closingBrace(text, i + 2);
      out += expand(text.slice(i + 2, end), env, text);
      i = end + 1;
    } else {
      const name = NAME.exec(text.slice(i + 1))?.[0];
      if (!name) throw new Error(`Invalid interpolation format in "${text}" (escape $ as $$)`);
      out += env[name] ?? "";
      i += 1 + name.length;
    }
  }
  return out;
}

function closingBrace(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === "{") depth++;
    if (text[i] === "}" && --depth === 0) return i;
  }
  throw new Error(`Invalid interpolation format in "${text}": unclosed \${`);
}

function expand(body: string, env: Env, whole: string): string {
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(body);
  if (!match) throw new Error(`Invalid interpolation format in "${whole}"`);
  const [, name, op, arg = ""] = match as unknown as [string, string, string | undefined, string];
  const value = env[name];
  const isSet = value !== undefined;
  const nonEmpty = isSet && value !== "";
  switch (op) {
    case undefined:
      return value ?? "";
    case ":-":
      return nonEmpty ? value : interpolate(arg, env);
    case "-":
      return isSet ? value : interpolate(arg, env);
    case ":?":
    case "?":
      if (op === ":?" ? !nonEmpty : !isSet) {
        throw new MissingVariableError(
          `required variable ${name} is missing a value: ${interpolate(arg, env)}`,
        );
      }
      return value!;
    case ":+":
      return nonEmpty ? interpolate(arg, env) : "";
    default: // "+"
      return isSet ? interpolate(arg, env) : "";
  }
}

/** Compose interpolates every string value in the file (keys are left alone). */
function interpolateAll(value: unknown, env: Env): unknown {
  if (typeof value === "string") return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, env));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)]),
    );
  }
  return value;
}

/** Variables compose demands with `${VAR:?…}` or `${VAR?…}`. */
function requiredVariables(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):?\?/g)].map((m) => m[1]!))];
}

/** A valid stand-in for a required variable: URL-safe and long enough for any secret schema. */
function dummyValue(name: string): string {
  return `compose-test-${name.toLowerCase().replaceAll("_", "-")}-`.padEnd(48, "x");
}

// --- loading ------------------------------------------------------------------------------

const composeText = (): Promise<string> => Deno.readTextFile(new URL("compose.yaml", ROOT));

/** Parses compose.yaml with `<<` merge keys, as compose reads them. */
function parseCompose(text: string): unknown {
  return parse(text, { merge: true });
}

/**
 * compose.yaml as docker compose would see it when the operator has set only the variables it
 * demands (each to a valid dummy value) and nothing else, so every `${VAR:-…}` takes its default.
 */
async function loadCompose(): Promise<{ compose: ComposeFile; operatorEnv: Env }> {
  const text = await composeText();
  const operatorEnv = Object.fromEntries(
    requiredVariables(text).map((name) => [name, dummyValue(name)]),
  );
  const compose = interpolateAll(parseCompose(text), operatorEnv) as ComposeFile;
  assert.ok(compose?.services, "compose.yaml has no services");
  return { compose, operatorEnv };
}

function serviceOf(compose: ComposeFile, name: string): ComposeService {
  const service = compose.services[name];
  assert.ok(service, `compose.yaml has no service "${name}"`);
  return service;
}

/** The environment compose hands the container; `KEY` alone (no value) passes through unset. */
function environmentOf(service: ComposeService): Env {
  const env = service.environment;
  if (env === undefined) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((entry) => {
      const at = entry.indexOf("=");
      return at === -1 ? [entry, undefined] : [entry.slice(0, at), entry.slice(at + 1)];
    }));
  }
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, v === null ? undefined : String(v)]),
  );
}

function configOf(compose: ComposeFile, name: AppName): Record<string, unknown> {
  return loadConfig(SCHEMAS[name], environmentOf(serviceOf(compose, name)));
}

function dependsOn(service: ComposeService): Record<string, string | undefined> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, undefined]));
  return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v?.condition]));
}

function healthcheckCommand(service: ComposeService): string[] {
  const test = service.healthcheck?.test;
  if (typeof test === "string") return ["CMD-SHELL", test];
  return test ?? [];
}

// --- tests --------------------------------------------------------------------------------

for (const name of APPS) {
  Deno.test(`compose.yaml gives the ${name} service a valid configuration`, async () => {
    const { compose } = await loadCompose();
    const service = serviceOf(compose, name);
    assert.equal(
      service.env_file,
      undefined,
      `${name}: use "environment" so the variables are checked here, not env_file`,
    );
    const env = environmentOf(service);
    const known = new Set([...Object.keys(SCHEMAS[name].shape), ...RUNTIME_TELEMETRY_VARIABLES]);
    const unknown = Object.keys(env).filter((key) => !known.has(key));
    assert.deepEqual(
      unknown,
      [],
      `${name}: compose sets variables its config schema does not know: ${unknown.join(", ")}`,
    );
    const config = loadConfig(SCHEMAS[name], env);
    assert.equal(config.HOST, "0.0.0.0", `${name}: must listen on every interface in a container`);
    if (name === "gateway") {
      assert.equal(config.ADMIN_HOST, "0.0.0.0", "gateway: the published admin port needs 0.0.0.0");
    }
  });
}

Deno.test("compose.yaml refuses to start without its secrets", async () => {
  const text = await composeText();
  const required = requiredVariables(text);
  for (const secret of REQUIRED_SECRETS) {
    assert.ok(required.includes(secret), `${secret} must be required with \${${secret}:?…}`);
    const env = Object.fromEntries(
      required.filter((n) => n !== secret).map((n) => [n, dummyValue(n)]),
    );
    assert.throws(
      () => interpolateAll(parseCompose(text), env),
      (error: unknown) => error instanceof MissingVariableError && error.message.includes(secret),
      `compose.yaml must fail loudly when ${secret} is unset`,
    );
  }
});

Deno.test("compose.yaml points the gateway at each service's compose name and port", async () => {
  const { compose } = await loadCompose();
  const gateway = configOf(compose, "gateway");
  for (const service of SERVICES) {
    const variable = GATEWAY_URL_VARS[service];
    const url = new URL(String(gateway[variable]));
    assert.equal(url.protocol, "http:", `${variable} must be plain http inside the network`);
    assert.equal(url.hostname, service, `${variable} must name the compose service "${service}"`);
    const port = Number(url.port || 80);
    assert.equal(port, configOf(compose, service).PORT, `${variable} must use ${service}'s PORT`);
  }
});

Deno.test("compose.yaml points every app service at the compose postgres, as the app and owner roles", async () => {
  const { compose } = await loadCompose();
  const pg = environmentOf(serviceOf(compose, "postgres"));
  assert.match(serviceOf(compose, "postgres").image ?? "", /^postgres:18(\b|$)/);
  const roles = loadConfig(DbRolesSchema, environmentOf(serviceOf(compose, "db-roles")));
  const superuser = new URL(roles.SUPERUSER_DATABASE_URL);
  assert.equal(superuser.hostname, "postgres");
  assert.equal(superuser.username, pg.POSTGRES_USER, "db-roles: the cluster's superuser");
  assert.equal(decodeURIComponent(superuser.password), pg.POSTGRES_PASSWORD);
  assert.equal(superuser.pathname, `/${pg.POSTGRES_DB}`, "db-roles: the stack's database");
  const rolesDeps = dependsOn(serviceOf(compose, "db-roles"));
  assert.equal(rolesDeps.postgres, "service_healthy", "db-roles waits for postgres");
  for (const name of APPS) {
    const config = configOf(compose, name);
    for (
      const [variable, role] of [
        ["DATABASE_URL", ROLES.app],
        ["MIGRATION_DATABASE_URL", ROLES.owner],
      ] as const
    ) {
      const url = new URL(String(config[variable]));
      assert.equal(url.hostname, "postgres", `${name}: ${variable} must name the postgres service`);
      assert.equal(Number(url.port || 5432), 5432, `${name}: ${variable} port`);
      assert.equal(url.username, role, `${name}: ${variable} user`);
      assert.equal(
        decodeURIComponent(url.password),
        roles.DATABASE_ROLE_PASSWORD,
        `${name}: ${variable} password is the one db-roles gives the roles`,
      );
      assert.equal(url.pathname, `/${pg.POSTGRES_DB}`, `${name}: ${variable} database`);
    }
  }
});

Deno.test("compose.yaml gives the gateway and quotes the same page size limit", async () => {
  const { compose } = await loadCompose();
  const gateway = environmentOf(serviceOf(compose, "gateway"));
  const quotes = environmentOf(serviceOf(compose, "quotes"));
  assert.equal(gateway.PAGE_SIZE_MAX, quotes.PAGE_SIZE_MAX);
  assert.equal(
    configOf(compose, "gateway").PAGE_SIZE_MAX,
    configOf(compose, "quotes").PAGE_SIZE_MAX,
  );
});

const publishedTargets = (service: ComposeService): number[] =>
  (service.ports ?? []).map((p) => {
    if (typeof p === "object") return Number(p.target);
    return Number(String(p).split("/")[0]!.split(":").at(-1));
  });

Deno.test("compose.yaml publishes the public port through the proxy, and the admin port on loopback", async () => {
  const { compose } = await loadCompose();
  const gateway = serviceOf(compose, "gateway");
  const config = configOf(compose, "gateway");
  const targets = publishedTargets(gateway);
  assert.ok(!targets.includes(Number(config.PORT)), "the gateway's public port is the proxy's");
  assert.deepEqual(gateway.ports, [`127.0.0.1:${config.ADMIN_PORT}:${config.ADMIN_PORT}`]);
  for (const service of SERVICES) {
    assert.equal(serviceOf(compose, service).ports, undefined, `${service} is internal only`);
  }
  const proxy = compose.services.proxy!;
  const proxyEnv = environmentOf(proxy);
  assert.equal(proxyEnv.GATEWAY_ADDRESS, `gateway:${config.PORT}`, "the proxy finds the gateway");
  const bind = Number(proxyEnv.PROXY_BIND?.split(":").at(-1));
  assert.ok(publishedTargets(proxy).includes(bind), `the proxy publishes PROXY_BIND ${bind}`);
  assert.ok(
    (proxy.volumes ?? []).some((v) => String(v).startsWith("./proxy/haproxy.cfg:")),
    "the proxy runs the repository's proxy/haproxy.cfg",
  );
});

Deno.test("compose.yaml has the gateway trust the proxy, and nothing else", async () => {
  const { compose } = await loadCompose();
  const config = configOf(compose, "gateway") as { TRUSTED_PROXIES: Cidr[] };
  const proxyAddress = compose.services.proxy?.networks?.default?.ipv4_address;
  assert.ok(proxyAddress, "the proxy has a fixed address the gateway can trust");
  const trusted = cidrMatcher(config.TRUSTED_PROXIES);
  assert.ok(trusted(proxyAddress), `TRUSTED_PROXIES covers the proxy (${proxyAddress})`);
  assert.deepEqual(config.TRUSTED_PROXIES.map((range) => range.prefix), [32], "one address");
  const subnet = parseCidr(compose.networks?.default?.ipam?.config?.[0]?.subnet ?? "");
  assert.ok(subnet && inCidr(parseIp(proxyAddress)!, subnet), "its address is on the network");
});

Deno.test("compose.yaml gives every app service a /healthz healthcheck", async () => {
  const { compose } = await loadCompose();
  for (const name of APPS) {
    const service = serviceOf(compose, name);
    assert.ok(service.healthcheck, `${name} has no healthcheck`);
    assert.notEqual(service.healthcheck.disable, true, `${name}: healthcheck is disabled`);
    const command = healthcheckCommand(service);
    assert.ok(["CMD", "CMD-SHELL"].includes(command[0] ?? ""), `${name}: healthcheck test`);
    assert.match(command.join(" "), /\/healthz/, `${name}: healthcheck must probe /healthz`);
  }
});

Deno.test("compose.yaml's app healthcheck passes on 200 and fails otherwise", async () => {
  const { compose } = await loadCompose();
  for (const name of APPS) {
    const [kind, program, ...args] = healthcheckCommand(serviceOf(compose, name));
    assert.equal(kind, "CMD", `${name}: run deno directly; the image has no curl`);
    assert.equal(program, "deno", `${name}: the healthcheck uses deno itself`);
    for (const status of [200, 503]) {
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        (req) =>
          new Response(null, { status: new URL(req.url).pathname === "/healthz" ? status : 404 }),
      );
      try {
        const { code } = await new Deno.Command(Deno.execPath(), {
          args,
          env: { PORT: String(server.addr.port) },
          stdout: "null",
          stderr: "null",
        }).output();
        assert.equal(code === 0, status === 200, `${name}: healthcheck exit ${code} on ${status}`);
      } finally {
        await server.shutdown();
      }
    }
  }
});

Deno.test("compose.yaml starts each app service only after its dependencies are healthy", async () => {
  const { compose } = await loadCompose();
  for (const name of APPS) {
    const deps = dependsOn(serviceOf(compose, name));
    assert.ok(Object.keys(deps).length > 0, `${name} has no depends_on`);
    assert.ok("postgres" in deps, `${name} must wait for postgres`);
    // The roles are made by a one-shot that must have finished; everything else must be healthy.
    assert.equal(deps["db-roles"], "service_completed_successfully", `${name} → db-roles`);
    for (const [dep, condition] of Object.entries(deps)) {
      if (dep === "db-roles") continue;
      assert.equal(condition, "service_healthy", `${name} → ${dep} must be service_healthy`);
      assert.ok(serviceOf(compose, dep).healthcheck, `${dep} needs a healthcheck to be waited on`);
    }
  }
});

Deno.test("compose.yaml starts the gateway only after all five services are healthy", async () => {
  const { compose } = await loadCompose();
  const deps = dependsOn(serviceOf(compose, "gateway"));
  for (const service of SERVICES) {
    assert.equal(deps[service], "service_healthy", `gateway must wait for ${service}`);
  }
});

Deno.test("compose.yaml runs a healthy single-node kafka and every app publishes to it", async () => {
  const { compose } = await loadCompose();
  const kafka = serviceOf(compose, "kafka");
  assert.match(kafka.image ?? "", /^apache\/kafka:/);
  const env = environmentOf(kafka);
  assert.equal(env.KAFKA_PROCESS_ROLES, "broker,controller");
  assert.equal(env.KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR, "1");
  assert.match(env.KAFKA_CONTROLLER_QUORUM_VOTERS ?? "", new RegExp(`^${env.KAFKA_NODE_ID}@`));
  assert.match(healthcheckCommand(kafka).join(" "), /\/opt\/kafka\/bin\/kafka-/);
  for (const name of APPS) {
    assert.deepEqual(configOf(compose, name).KAFKA_BROKERS, ["kafka:9092"], name);
    assert.equal(dependsOn(serviceOf(compose, name)).kafka, "service_healthy", name);
  }
});

Deno.test("each app service builds its own stage of the Dockerfile with the whole workspace", async () => {
  const { compose } = await loadCompose();
  const workspace: string[] = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)))
    .workspace;
  const dockerfile = await Deno.readTextFile(new URL("Dockerfile", ROOT));
  for (const member of workspace) {
    const path = member.replace(/^\.\//, "");
    assert.match(
      dockerfile,
      new RegExp(`^COPY ${path}/deno\\.json `, "m"),
      `the Dockerfile must copy ${path}/deno.json: the workspace needs every member's`,
    );
  }
  assert.match(dockerfile, /^FROM denoland\/deno:\d+\.\d+\.\d+ AS deps$/m, "pinned Deno image");
  const stages = new Map<string, string>();
  for (const part of dockerfile.split(/^(?=FROM )/m)) {
    const stage = part.match(/^FROM \S+ AS (\S+)$/m)?.[1];
    if (stage) stages.set(stage, part);
  }
  for (const name of APPS) {
    const dir = MEMBER_DIRS[name];
    const build = serviceOf(compose, name).build;
    assert.ok(build && typeof build === "object", `${name}: build needs context and target`);
    assert.equal(build.context, ".", `${name}: build context must be the repository root`);
    assert.equal(build.target, name, `${name}: target`);
    const stage = stages.get(name);
    assert.ok(stage, `the Dockerfile needs a stage named ${name}`);
    assert.match(stage, /^FROM deps AS /m, `${name}: builds on the shared deps stage`);
    assert.match(stage, new RegExp(`^COPY ${dir}/ ${dir}/$`, "m"), `${name}: copies its folder`);
    assert.match(stage, /^USER deno$/m, `${name}: must not run as root`);
    const cmd = stage.match(/^CMD (\[.*\])$/m)?.[1];
    assert.ok(cmd, `${name}: needs an exec-form CMD`);
    const args: string[] = JSON.parse(cmd);
    assert.equal(args.at(-1), `${dir}/main.ts`, `${name}: CMD must run ${dir}/main.ts`);
    assert.ok(!args.includes("-A") && !args.includes("--allow-all"), `${name}: no --allow-all`);
  }
});

Deno.test("compose.yaml sends every app's telemetry, under its own name, to a collector whose pipelines hold together", async () => {
  const { compose } = await loadCompose();
  for (const name of APPS) {
    const env = environmentOf(serviceOf(compose, name));
    assert.equal(env.OTEL_SERVICE_NAME, name, `${name}: names itself in what it exports`);
    assert.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, "http://otel-collector:4318", name);
    assert.equal(
      env.OTEL_TRACES_SAMPLER_ARG,
      RECOMMENDED_TRACE_SAMPLE,
      `${name}: the recommended share`,
    );
  }
  const collector = serviceOf(compose, "otel-collector");
  const command = (collector as { command?: string[] }).command ?? [];
  assert.deepEqual(command, ["--config=/etc/otelcol-contrib/collector.yaml"]);
  const read = async (file: string) =>
    parse(await Deno.readTextFile(new URL(file, ROOT))) as {
      receivers?: Record<string, { protocols?: { http?: { endpoint?: string } } }>;
      processors?: Record<string, unknown>;
      exporters?: Record<string, unknown>;
      service: { pipelines: Record<string, Partial<Record<string, string[]>>> };
    };
  const base = await read("otel/collector.yaml");
  const backend = await read("otel/backend.yaml");
  assert.equal(base.receivers?.otlp?.protocols?.http?.endpoint, "0.0.0.0:4318");
  // Every component a pipeline names is defined, with or without backend.yaml merged over it.
  for (const config of [base.service.pipelines, backend.service.pipelines]) {
    for (const [signal, pipeline] of Object.entries(config)) {
      const merged = { ...base.service.pipelines[signal], ...pipeline };
      for (const [kind, names] of Object.entries(merged)) {
        const defined = (base as unknown as Record<string, Record<string, unknown>>)[kind] ?? {};
        for (const component of names ?? []) {
          assert.ok(component in defined, `${signal}: ${kind} "${component}" is not defined`);
        }
      }
    }
  }
  assert.deepEqual(base.service.pipelines.traces?.processors, [
    "memory_limiter",
    "transform/no-queries",
    "batch",
  ]);
  for (const mount of (collector as { volumes?: string[] }).volumes ?? []) {
    await Deno.stat(new URL(mount.split(":")[0]!, ROOT));
  }
});
