import type { Hono } from "hono";
import type { z } from "zod";
import { loadConfig } from "../config.ts";
import { connect, openDatabase, pinnedReadLimits, type Sql } from "../db/mod.ts";
import { assertRuntimeRole } from "../db/tenancy.ts";
import { createLogger, type Logger } from "../log.ts";
import {
  type ContextKey,
  importContextKey,
  INTERNAL_CONTEXT_HEADER,
  type InternalContext,
  signInternalContext,
} from "../internal_context.ts";
import { ALL_SCOPES } from "../scopes.ts";
import type { ServiceDefinition, ServiceDeps } from "../service_main.ts";
import { type ServiceEnv, targetOf } from "../service_defaults.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import type { Envelope } from "./envelope.ts";

/**
 * A service app on a fresh, migrated database, called in-process through `app.request` with a
 * properly signed internal context — for tests beside a service's code.
 */
export interface ServiceHarness<C> {
  app: Hono<ServiceEnv>;
  /** The test database as its superuser, past the row-level policies: for fixtures and checks. */
  sql: Sql;
  /** The test database, for code under test that opens its own pool (the embedded bus). */
  databaseUrl: string;
  deps: ServiceDeps<C>;
  contextKey: ContextKey;
  request(
    method: string,
    path: string,
    options?: {
      body?: unknown;
      organizationId?: string;
      scopes?: readonly string[];
      /** Fixed when a test needs one credential across requests (it owns webhooks, say). */
      credentialId?: string;
    },
  ): Promise<Response>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What every service's configuration needs in a test; the database comes from the harness. */
export const TEST_SERVICE_ENV: Readonly<Record<string, string>> = {
  DATABASE_URL: "postgres://unused",
  MIGRATION_DATABASE_URL: "postgres://unused",
  INTERNAL_SECRET: "test-internal-secret-of-at-least-32-chars",
  LOG_LEVEL: "error",
};

/** What the harness's signed context says of the shop and the gateway, as the gateway would. */
export const TEST_ORGANIZATION_NAME = "Harness Print Co";
export const TEST_PUBLIC_URL = "http://gateway.test";

export interface ServiceHarnessOptions<C> {
  /** More variables, as a process would read them (required ones the service adds, say). */
  env?: Record<string, string>;
  /** Values laid over the loaded configuration. */
  config?: Partial<C>;
  logger?: Logger;
  onQuery?: (text: string) => void;
}

/**
 * The service's real app, as `runService` builds it, on a fresh migrated database. Its
 * configuration is its own schema's defaults, loaded from TEST_SERVICE_ENV and `env`, with
 * `config` laid over.
 */
export async function serviceHarness<S extends z.ZodObject>(
  definition: ServiceDefinition<S>,
  options: ServiceHarnessOptions<z.output<S>> = {},
): Promise<ServiceHarness<z.output<S>>> {
  type C = z.output<S>;
  const config: C = {
    ...loadConfig(definition.configSchema, { ...TEST_SERVICE_ENV, ...options.env }),
    ...options.config,
  };
  const db: TestDatabase = await createTestDatabase();
  const logger = options.logger ?? createLogger({ level: "error" });
  // The app runs as the services do, as printshop_app under the row-level policies; the test
  // itself looks at the tables as the superuser, past them.
  const appSql = await openDatabase(db.appUrl, definition.service, definition.migrations, logger, {
    migrationUrl: db.ownerUrl,
    // As the service's own configuration has them (shared/service_main.ts), but with a place at
    // an organisation's first read: the suites' first two organisations read on pinned pools
    // throughout, the others in transactions.
    pinnedReads: {
      ...pinnedReadLimits((config as { PINNED_READ_POOLS?: number }).PINNED_READ_POOLS ?? 0),
      warmReads: 1,
    },
    ...(options.onQuery ? { onQuery: options.onQuery } : {}),
  });
  await assertRuntimeRole(appSql, definition.service);
  const sql = connect(db.url, { schema: definition.service });
  const contextKey = await importContextKey(TEST_SERVICE_ENV.INTERNAL_SECRET!);
  const deps: ServiceDeps<C> = { config, sql: appSql, logger, contextKey };
  const app = definition.buildApp(deps);
  const defaultOrg = crypto.randomUUID();
  const close = async (): Promise<void> => {
    await appSql.end();
    await sql.end();
    await db.drop();
  };
  return {
    app,
    sql,
    databaseUrl: db.url,
    deps,
    contextKey,
    async request(method, path, opts = {}) {
      const context: InternalContext = {
        organizationId: opts.organizationId ?? defaultOrg,
        credentialKind: "tenant_key",
        credentialId: opts.credentialId ?? crypto.randomUUID(),
        scopes: [...(opts.scopes ?? ALL_SCOPES)],
        requestId: crypto.randomUUID(),
        issuedAt: Date.now(),
        organizationName: TEST_ORGANIZATION_NAME,
        publicUrl: TEST_PUBLIC_URL,
      };
      const target = targetOf(new URL(path, "http://service.test").href);
      const headers = new Headers({
        [INTERNAL_CONTEXT_HEADER]: await signInternalContext(contextKey, method, target, context),
      });
      let body: string | undefined;
      if (opts.body !== undefined) {
        headers.set("content-type", "application/json");
        body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      }
      return await app.request(path, { method, headers, body });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** An answer as a test reads it: the status and the envelope. */
export interface Answer<T = Record<string, unknown>> {
  status: number;
  body: Envelope<T>;
}

/** One request to a harness as `org` (all scopes unless given), read as an envelope. */
export async function callAs<T = Record<string, unknown>>(
  h: Pick<ServiceHarness<unknown>, "request">,
  method: string,
  path: string,
  org: string,
  body?: unknown,
  scopes: readonly string[] = ALL_SCOPES,
): Promise<Answer<T>> {
  const res = await h.request(method, path, { body, organizationId: org, scopes });
  return { status: res.status, body: await res.json() as Envelope<T> };
}

/** A request that must succeed (2xx); its `data`. A failure names the request and the answer. */
export async function okAs<T = Record<string, unknown>>(
  h: Pick<ServiceHarness<unknown>, "request">,
  method: string,
  path: string,
  org: string,
  body?: unknown,
): Promise<T> {
  const answer = await callAs<T>(h, method, path, org, body);
  if (answer.status >= 300) {
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
  return answer.body.data;
}
