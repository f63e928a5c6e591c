/**
 * `deno task start`: the whole platform on one machine. Embedded PostgreSQL unless DATABASE_URL
 * is set, every service and the gateway as its own process, generated secrets kept in DATA_DIR,
 * and on an empty database a demo organisation with a key holding every scope.
 */
import { z } from "zod";
import { join, resolve } from "node:path";
import { loadConfigOrExit, logLevel, port, postgresUrl } from "@printshop/shared/config";
import { startEmbeddedPostgres } from "@printshop/shared/embedded-postgres";
import { connect } from "@printshop/shared/db";
import { type DatabaseRoles, launchStack, prepareDatabaseRoles } from "@printshop/shared/launcher";
import { ALL_SCOPES } from "@printshop/shared/scopes";
import { claimDataDir, type DataDirClaim, watchLaunchers } from "./start_guard.ts";

const StartConfig = z.object({
  DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: postgresUrl().optional(),
  MIGRATION_DATABASE_URL: postgresUrl().optional(),
  PORT: port(8080),
  HOST: z.string().default("127.0.0.1"),
  ADMIN_PORT: port(8081),
  PLATFORM_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  INTERNAL_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  WEBHOOK_SECRETS_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  LOG_LEVEL: logLevel(),
  /**
   * Where each process's output goes, one file each (`gateway.log`, `quotes.log`, …), appended
   * to; unset, every process writes to this command's output, each line naming its `service`.
   */
  LOG_DIR: z.string().optional(),
});
const config = loadConfigOrExit(StartConfig);
const dataDir = resolve(config.DATA_DIR);
await Deno.mkdir(dataDir, { recursive: true });
const logDir = config.LOG_DIR ? resolve(config.LOG_DIR) : null;
if (logDir) await Deno.mkdir(logDir, { recursive: true });

const say = (line: string): void => console.error(`[start] ${line}`);
const refuse = (line: string): never => {
  say(line);
  Deno.exit(1);
};

// One stack per data directory: a second start would fight the first for its database.
const claim: DataDirClaim = await claimDataDir(dataDir).catch((error: Error) =>
  refuse(error.message)
);

/** Refuses a port another process holds, before anything starts, naming the variable to change. */
function assertFree(hostname: string, portNumber: number, variable: string): void {
  if (portNumber === 0) return;
  try {
    Deno.listen({ hostname, port: portNumber }).close();
  } catch {
    void claim.release();
    refuse(
      `${hostname}:${portNumber} is in use (another stack, or another program); ` +
        `stop it or set ${variable} to a free port`,
    );
  }
}
assertFree(config.HOST, config.PORT, "PORT");
assertFree("127.0.0.1", config.ADMIN_PORT, "ADMIN_PORT");

interface Secrets {
  internalSecret: string;
  webhookSecretsKey: string;
  adminToken: string;
  postgresPassword: string;
}

const random = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

async function loadSecrets(): Promise<Secrets> {
  const file = join(dataDir, "secrets.json");
  let stored: Partial<Secrets> = {};
  try {
    stored = JSON.parse(await Deno.readTextFile(file)) as Partial<Secrets>;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  // A data directory from an older version lacks newer secrets: add them, keep the rest.
  const secrets: Secrets = {
    internalSecret: stored.internalSecret ?? random(32),
    webhookSecretsKey: stored.webhookSecretsKey ?? random(32),
    adminToken: stored.adminToken ?? random(32),
    postgresPassword: stored.postgresPassword ?? random(24),
  };
  if (Object.keys(secrets).some((k) => !(k in stored))) {
    await Deno.writeTextFile(file, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 });
  }
  return secrets;
}

const secrets = await loadSecrets();
const adminToken = config.PLATFORM_ADMIN_TOKEN ?? secrets.adminToken;

let stack: Awaited<ReturnType<typeof launchStack>> | undefined;
let stopDatabase = async (): Promise<void> => {};
/** The embedded cluster's port, recorded for `deno task sql`. */
let postgresPort: number | undefined;
let stopping: Promise<never> | undefined;
// One shutdown however many signals arrive: Ctrl-C reaches this process and, a moment later,
// the death of each launcher above it; a second call must wait for the first, not exit mid-way.
const shutdown = (code: number): Promise<never> =>
  stopping ??= (async () => {
    say("stopping…");
    await stack?.stop();
    await stopDatabase();
    await claim.release();
    say("stopped");
    Deno.exit(code);
  })();
// Children started so far watch our stdin pipe, so an exit here, mid-launch, also stops them.
Deno.addSignalListener("SIGINT", () => void shutdown(0));
Deno.addSignalListener("SIGTERM", () => void shutdown(0));
// `npx … task start` is three processes above this one; SIGTERM to the outermost stops all.
watchLaunchers((pid) => {
  say(`process ${pid} that started this stack is gone; stopping`);
  void shutdown(0);
});

/**
 * The two URLs the stack runs on (README "Database roles"). Given both, they are used as they
 * are. Given DATABASE_URL alone, it must name a superuser, which sets the roles up as on the
 * embedded cluster (their password is the one kept in DATA_DIR); a role short of that is refused
 * with what to set.
 */
async function externalRoles(databaseUrl: string): Promise<DatabaseRoles> {
  if (config.MIGRATION_DATABASE_URL) {
    return { databaseUrl, migrationDatabaseUrl: config.MIGRATION_DATABASE_URL };
  }
  const probe = connect(databaseUrl, { schema: "public", max: 1 });
  let superuser = false;
  try {
    [{ superuser } = { superuser: false }] = await probe<{ superuser: boolean }[]>`
      SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`;
  } finally {
    await probe.end();
  }
  if (!superuser) {
    refuse(
      "DATABASE_URL alone must name a superuser, which sets up the database roles; otherwise " +
        "give DATABASE_URL as printshop_app and MIGRATION_DATABASE_URL as printshop_owner " +
        '(README "Database roles")',
    );
  }
  say(
    "DATABASE_URL is a superuser's: setting up the database roles printshop_owner and printshop_app",
  );
  return await prepareDatabaseRoles(databaseUrl, secrets.postgresPassword);
}

if (config.MIGRATION_DATABASE_URL && !config.DATABASE_URL) {
  refuse("MIGRATION_DATABASE_URL is set without DATABASE_URL; set both, or neither");
}
let roles: DatabaseRoles | undefined;
try {
  if (config.DATABASE_URL) roles = await externalRoles(config.DATABASE_URL);
  else {
    const pg = await startEmbeddedPostgres({
      dataDir: join(dataDir, "postgres"),
      password: secrets.postgresPassword,
      logFile: join(dataDir, "postgres.log"),
      // A database that dies is started again, as the launcher does with the services: said here.
      say,
    });
    for (const note of pg.notes) say(`note: ${note}`);
    stopDatabase = pg.stop;
    const admin = connect(pg.url, { schema: "public", max: 1 });
    const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = 'printshop'`;
    if (!exists) await admin.unsafe("CREATE DATABASE printshop");
    await admin.end();
    const url = new URL(pg.url);
    url.pathname = "/printshop";
    // The services run as printshop_app and migrate as printshop_owner, never as the superuser;
    // a data directory from before the roles is handed over to the owner here.
    roles = await prepareDatabaseRoles(url.toString(), secrets.postgresPassword);
    say(`embedded PostgreSQL on 127.0.0.1:${pg.port} (data in ${pg.dataDir})`);
    postgresPort = pg.port;
  }
  stack = await launchStack({
    ...roles,
    internalSecret: config.INTERNAL_SECRET ?? secrets.internalSecret,
    webhookSecretsKey: config.WEBHOOK_SECRETS_KEY ?? secrets.webhookSecretsKey,
    adminToken,
    host: config.HOST,
    gatewayPort: config.PORT,
    adminPort: config.ADMIN_PORT,
    env: { LOG_LEVEL: config.LOG_LEVEL },
    ...(logDir ? { logDir } : {}),
    // One process dying must not take the others down: the launcher restarts it and says so.
    say,
  });
} catch (error) {
  say(`could not start: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
const running = stack!;
await claim.announce({
  gatewayUrl: running.gatewayUrl,
  adminUrl: running.adminUrl,
  ...(postgresPort === undefined ? {} : { postgresPort }),
});

const adminCall = async (method: string, path: string, body?: unknown): Promise<unknown> => {
  const res = await fetch(`${running.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json() as { data: unknown };
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}`);
  return json.data;
};

const lines = [
  `Gateway:   ${running.gatewayUrl}   (API reference: ${running.gatewayUrl}/docs)`,
  `Admin API: ${running.adminUrl}`,
  config.PLATFORM_ADMIN_TOKEN
    ? "Admin token: from PLATFORM_ADMIN_TOKEN"
    : `Admin token: ${adminToken}   (kept in ${join(dataDir, "secrets.json")})`,
];
const organizations = await adminCall("GET", "/admin/organizations") as unknown[];
if (organizations.length === 0) {
  const org = await adminCall("POST", "/admin/organizations", { name: "Demo Print Shop" }) as {
    id: string;
  };
  const key = await adminCall("POST", `/admin/organizations/${org.id}/api-keys`, {
    name: "demo",
    scopes: ALL_SCOPES,
  }) as { apiKey: string };
  lines.push(
    `Demo organisation: ${org.id}`,
    `Demo API key (every scope; shown once): ${key.apiKey}`,
    `Try: curl -H 'X-API-Key: ${key.apiKey}' ${running.gatewayUrl}/v1/me`,
  );
}
// Written to stdout itself, not through console: with OTEL_DENO=true, Deno exports console output
// as log records, and these lines hold the admin token and the demo key.
// Framed, and the last thing printed: on a first start it follows some seventy log lines.
const rule = "─".repeat(Math.max(...lines.map((line) => line.length)));
Deno.stdout.writeSync(
  new TextEncoder().encode(
    ["", rule, "The print-shop platform is up.", "", ...lines, rule, "Press Ctrl-C to stop.", ""]
      .join("\n") + "\n",
  ),
);
