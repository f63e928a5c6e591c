import { launchStack, type RunningStack, type StackOptions } from "../launcher.ts";
import { ALL_SCOPES } from "../scopes.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";

export interface TestStack extends RunningStack {
  db: TestDatabase;
  logDir: string;
  adminToken: string;
  /** Calls the admin API and returns the parsed body (throws on non-2xx). */
  admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Creates an organisation and a key; `scopes` defaults to every scope. */
  tenant(scopes?: readonly string[], name?: string): Promise<Tenant>;
  /** Sends a request to the gateway with the given key. */
  call(
    key: string | null,
    method: string,
    path: string,
    body?: unknown,
    headers?: HeadersInit,
  ): Promise<Response>;
  /** Every line the processes have logged so far. */
  logs(): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface Tenant {
  organizationId: string;
  keyId: string;
  apiKey: string;
}

const randomSecret = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

/** Boots the whole stack as real processes against a fresh database. */
export async function startTestStack(
  options: Partial<Pick<StackOptions, "env" | "processEnv">> & {
    /** A database of the test's own (on a server it may stop) instead of a fresh one. */
    database?: TestDatabase;
  } = {},
): Promise<TestStack> {
  const db = options.database ?? await createTestDatabase();
  const logDir = await Deno.makeTempDir({ prefix: "printshop-e2e-logs-" });
  const adminToken = randomSecret();
  let stack: RunningStack;
  try {
    stack = await launchStack({
      databaseUrl: db.appUrl,
      migrationDatabaseUrl: db.ownerUrl,
      internalSecret: randomSecret(),
      webhookSecretsKey: randomSecret(),
      adminToken,
      logDir,
      // Receivers in tests listen on loopback, which production refuses as a webhook target.
      env: { LOG_LEVEL: "info", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", ...options.env },
      ...(options.processEnv ? { processEnv: options.processEnv } : {}),
    });
  } catch (error) {
    await db.drop().catch(() => {});
    throw error;
  }
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${stack.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) {
      throw new Error(`admin ${method} ${path} → ${res.status}: ${JSON.stringify(json)}`);
    }
    return json as T;
  };
  const stop = async (): Promise<void> => {
    await stack.stop();
    await db.drop().catch(() => {});
    await Deno.remove(logDir, { recursive: true }).catch(() => {});
  };
  return {
    ...stack,
    stop,
    db,
    logDir,
    adminToken,
    admin,
    async tenant(scopes = ALL_SCOPES, name = "Test Print Shop") {
      const org = await admin<{ data: { id: string } }>("POST", "/admin/organizations", { name });
      const key = await admin<{ data: { id: string; apiKey: string } }>(
        "POST",
        `/admin/organizations/${org.data.id}/api-keys`,
        { scopes },
      );
      return { organizationId: org.data.id, keyId: key.data.id, apiKey: key.data.apiKey };
    },
    call(key, method, path, body, headers) {
      const h = new Headers(headers);
      if (key !== null) h.set("x-api-key", key);
      if (body !== undefined && !h.has("content-type")) h.set("content-type", "application/json");
      return fetch(`${stack.gatewayUrl}${path}`, {
        method,
        headers: h,
        body: body === undefined
          ? undefined
          : typeof body === "string"
          ? body
          : JSON.stringify(body),
      });
    },
    async logs() {
      let all = "";
      for await (const entry of Deno.readDir(logDir)) {
        all += await Deno.readTextFile(`${logDir}/${entry.name}`);
      }
      return all;
    },
    [Symbol.asyncDispose]: stop,
  };
}
