import { z } from "zod";

/** Raised when the environment does not satisfy a process's configuration schema. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

/**
 * Parses the environment against a zod object schema whose keys are variable names.
 * Empty strings count as unset, so `VAR=` in compose or a shell falls back to the default.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Env): z.output<S> {
  const cleaned: Env = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== "") cleaned[key] = value.trim();
  }
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0];
    const name = issue?.path.join(".") || "configuration";
    const received = cleaned[String(issue?.path[0] ?? "")];
    // JSON quoting keeps the message on one line whatever the value holds.
    const shown = received === undefined ? "unset" : JSON.stringify(secretSafe(name, received));
    throw new ConfigError(
      `Invalid configuration: ${name} ${issue?.message ?? "is invalid"} (got ${shown})`,
    );
  }
  return result.data;
}

/** Loads configuration for a process entry point; a bad value stops the process with one line. */
export function loadConfigOrExit<S extends z.ZodObject>(
  schema: S,
  env: Env = Deno.env.toObject(),
): z.output<S> {
  try {
    return loadConfig(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      Deno.exit(1);
    }
    throw error;
  }
}

function secretSafe(name: string, value: string): string {
  return /SECRET|TOKEN|PASSWORD|KEY|DATABASE_URL/.test(name) ? "<redacted>" : value;
}

// Building blocks shared by every process's schema, so a variable means the same everywhere.

export const port = (fallback: number): z.ZodType<number> =>
  z.coerce.number({ error: "must be a port number" }).int("must be a whole number")
    .min(0, "must be between 0 and 65535").max(65535, "must be between 0 and 65535")
    .default(fallback);

export const positiveInt = (fallback: number, max = Number.MAX_SAFE_INTEGER): z.ZodType<number> =>
  z.coerce.number({ error: "must be a number" }).int("must be a whole number")
    .min(1, "must be at least 1").max(max, `must be at most ${max}`).default(fallback);

export const httpUrl = (): z.ZodType<string> =>
  z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).transform((u) =>
    u.replace(/\/+$/, "")
  );

export const postgresUrl = (): z.ZodType<string> =>
  z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL");

export const secret = (): z.ZodType<string> => z.string().min(32, "must be at least 32 characters");

export const bool = (fallback: boolean): z.ZodType<boolean> =>
  z.enum(["true", "false", "1", "0"], { error: "must be true or false" })
    .transform((v) => v === "true" || v === "1").default(fallback);

export const logLevel = (): z.ZodType<"debug" | "info" | "warn" | "error"> =>
  z.enum(["debug", "info", "warn", "error"], { error: "must be debug, info, warn or error" })
    .default("info");

/**
 * Where events travel. Unset KAFKA_BROKERS means the embedded transport on DATABASE_URL; the
 * SASL variables only mean something together, which `openEventBus` checks.
 */
export const eventBusConfig = {
  KAFKA_BROKERS: z.string()
    .transform((v) => v.split(",").map((b) => b.trim()).filter((b) => b !== ""))
    .pipe(
      z.array(z.string().regex(/^[A-Za-z0-9.\-]+:\d{1,5}$/, "must list host:port pairs"))
        .min(1, "must list at least one host:port"),
    ).optional(),
  KAFKA_CLIENT_ID: z.string().regex(/^[A-Za-z0-9._-]{1,100}$/, "must be a plain name")
    .default("printshop"),
  KAFKA_SSL: bool(false),
  KAFKA_SASL_MECHANISM: z.enum(["plain", "scram-sha-256", "scram-sha-512"], {
    error: "must be plain, scram-sha-256 or scram-sha-512",
  }).optional(),
  KAFKA_SASL_USERNAME: z.string().optional(),
  KAFKA_SASL_PASSWORD: z.string().optional(),
  /**
   * How the work beside requests (the outbox relay, the event consumers, the webhook and mail
   * workers) is driven. `loops`: long-lived loops woken by LISTEN/NOTIFY, for processes that
   * keep running (`task start`, compose). `on-demand`: no LISTEN; each write kicks this process's
   * loops, each relayed batch kicks KICK_URLS, and `POST /internal/kick` (a cron tick on Deno
   * Deploy) drains them. README "Deno Deploy".
   */
  BACKGROUND_WORK: z.enum(["loops", "on-demand"], { error: "must be loops or on-demand" })
    .default("loops"),
  /**
   * In on-demand mode, the apps that consume this one's events (their base URLs, comma-separated):
   * each relayed batch asks them to read it at once, rather than at their next tick.
   */
  KICK_URLS: z.preprocess(
    (value) =>
      typeof value === "string" ? value.split(",").map((part) => part.trim()).filter(Boolean) : [],
    z.array(httpUrl()),
  ),
};

/**
 * Limits of the public API. Every process reads the same variables, so what the gateway
 * advertises (GET /v1/reference/limits) is what each service enforces.
 */
export const limitsConfig = {
  PAGE_SIZE_MAX: positiveInt(200, 10_000),
  BULK_MAX_ROWS: positiveInt(1000, 100_000),
};

/**
 * Where a process's database is: DATABASE_URL as the role the process runs as (printshop_app,
 * held to the row-level policies), MIGRATION_DATABASE_URL as the role that owns the tables and
 * runs the migrations (printshop_owner). README "Database roles".
 */
export const databaseConfig = {
  DATABASE_URL: postgresUrl(),
  MIGRATION_DATABASE_URL: postgresUrl(),
};

/**
 * How many organisations at a time read on connections pinned to them (shared/db/pinned_pools.ts,
 * README "Database roles"): 0 turns that off, as it must be behind a transaction pooler, which
 * does not pass a connection's start-up settings on.
 */
export const pinnedReadsConfig = {
  PINNED_READ_POOLS: z.coerce.number({ error: "must be a number" }).int("must be a whole number")
    .min(0, "must be 0 or more").max(64, "must be at most 64").default(2),
};

/** Variables every service process reads. */
export const serviceBaseConfig = {
  PORT: port(8080),
  HOST: z.string().default("127.0.0.1"),
  ...databaseConfig,
  ...pinnedReadsConfig,
  INTERNAL_SECRET: secret(),
  LOG_LEVEL: logLevel(),
  ...limitsConfig,
  ...eventBusConfig,
};
