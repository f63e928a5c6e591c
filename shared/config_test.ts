import assert from "node:assert/strict";
import { z } from "zod";
import {
  bool,
  ConfigError,
  httpUrl,
  loadConfig,
  logLevel,
  port,
  positiveInt,
  postgresUrl,
  secret,
  serviceBaseConfig,
} from "./config.ts";

const ServiceSchema = z.object({ ...serviceBaseConfig });

const DATABASE_URL = "postgres://app:hunter2-db-password@db.internal:5432/printshop";
const INTERNAL_SECRET = "s3cr3t-".repeat(6);
const MIGRATION_DATABASE_URL = "postgres://owner:hunter3-db-password@db.internal:5432/printshop";
const validEnv = { DATABASE_URL, MIGRATION_DATABASE_URL, INTERNAL_SECRET };

/** Runs loadConfig and returns the ConfigError it throws; fails the test when it does not throw. */
function configError<S extends z.ZodObject>(
  schema: S,
  env: Record<string, string | undefined>,
): ConfigError {
  try {
    loadConfig(schema, env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${error}`);
    return error;
  }
  assert.fail("loadConfig accepted an invalid environment");
}

Deno.test("loadConfig() stops at a bad PORT and names it", async (t) => {
  await t.step("a non-number is one ConfigError line naming PORT and the value", () => {
    const error = configError(ServiceSchema, { ...validEnv, PORT: "eighty" });
    assert.equal(error.name, "ConfigError");
    assert.match(error.message, /^Invalid configuration: PORT /);
    assert.match(error.message, /must be a port number/);
    assert.match(error.message, /got "eighty"/);
    assert.ok(!error.message.includes("\n"), "the message is a single line");
  });

  await t.step("out of range and fractional ports are refused with their own reason", () => {
    assert.match(
      configError(ServiceSchema, { ...validEnv, PORT: "70000" }).message,
      /PORT must be between 0 and 65535 \(got "70000"\)/,
    );
    assert.match(
      configError(ServiceSchema, { ...validEnv, PORT: "-1" }).message,
      /PORT must be between 0 and 65535/,
    );
    assert.match(
      configError(ServiceSchema, { ...validEnv, PORT: "80.5" }).message,
      /PORT must be a whole number/,
    );
  });

  await t.step("only the first problem is reported, even when several variables are bad", () => {
    const error = configError(ServiceSchema, {
      ...validEnv,
      PORT: "eighty",
      LOG_LEVEL: "loud",
    });
    assert.equal(error.message.split("\n").length, 1);
    assert.match(error.message, /PORT/);
    assert.doesNotMatch(error.message, /LOG_LEVEL/);
  });

  await t.step("a missing required variable is named and reported as unset", () => {
    const error = configError(ServiceSchema, { INTERNAL_SECRET });
    assert.match(error.message, /^Invalid configuration: DATABASE_URL /);
    assert.match(error.message, /\(got unset\)$/);
  });

  await t.step("the message stays one line when the bad value holds a line break", () => {
    // The process prints this message as its only line before exiting; a value with an
    // embedded newline must not split it (or forge a second log line).
    const error = configError(ServiceSchema, { ...validEnv, PORT: "80\n80" });
    assert.match(error.message, /PORT/);
    assert.ok(
      !error.message.includes("\n"),
      `expected one line, got ${JSON.stringify(error.message)}`,
    );
  });
});

Deno.test("loadConfig() treats an empty or blank variable as unset", async (t) => {
  await t.step("PORT= and LOG_LEVEL= fall back to their defaults", () => {
    const config = loadConfig(ServiceSchema, { ...validEnv, PORT: "", LOG_LEVEL: "" });
    assert.equal(config.PORT, 8080);
    assert.equal(config.LOG_LEVEL, "info");
  });

  await t.step("whitespace only counts as unset too", () => {
    const config = loadConfig(ServiceSchema, { ...validEnv, PORT: "   ", HOST: " \t" });
    assert.equal(config.PORT, 8080);
    assert.equal(config.HOST, "127.0.0.1");
  });

  await t.step("an empty required variable is reported as unset, not as a bad value", () => {
    const error = configError(ServiceSchema, { ...validEnv, DATABASE_URL: "" });
    assert.match(error.message, /DATABASE_URL .*\(got unset\)$/);
  });

  await t.step("surrounding whitespace is trimmed from a given value", () => {
    const config = loadConfig(ServiceSchema, { ...validEnv, PORT: " 9090 ", HOST: " 0.0.0.0 " });
    assert.equal(config.PORT, 9090);
    assert.equal(config.HOST, "0.0.0.0");
  });
});

Deno.test("loadConfig() never echoes a secret's value", async (t) => {
  await t.step("a bad DATABASE_URL (with its password) is redacted", () => {
    const bad = "mysql://app:hunter2-db-password@db.internal/printshop";
    const error = configError(ServiceSchema, { ...validEnv, DATABASE_URL: bad });
    assert.match(error.message, /DATABASE_URL must be a postgres:\/\/ URL/);
    assert.match(error.message, /got "<redacted>"/);
    assert.ok(!error.message.includes("hunter2"), error.message);
    assert.ok(!error.message.includes(bad), error.message);
  });

  await t.step("a too-short INTERNAL_SECRET is redacted", () => {
    const error = configError(ServiceSchema, {
      DATABASE_URL,
      MIGRATION_DATABASE_URL,
      INTERNAL_SECRET: "tiny-but-real",
    });
    assert.match(error.message, /INTERNAL_SECRET must be at least 32 characters/);
    assert.ok(!error.message.includes("tiny-but-real"), error.message);
  });

  await t.step("any name with SECRET, TOKEN, PASSWORD or KEY is redacted", () => {
    const schema = z.object({
      WEBHOOK_SECRET: secret(),
      PLATFORM_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
      DB_PASSWORD: z.string().min(12, "must be at least 12 characters"),
      SIGNING_KEY: z.string().min(20, "must be at least 20 characters"),
    });
    const good = {
      WEBHOOK_SECRET: "w".repeat(32),
      PLATFORM_ADMIN_TOKEN: "t".repeat(16),
      DB_PASSWORD: "p".repeat(12),
      SIGNING_KEY: "k".repeat(20),
    };
    for (const [i, name] of Object.keys(good).entries()) {
      const leaked = `leak${i}`; // shorter than every minimum, so each one is refused
      const error = configError(schema, { ...good, [name]: leaked });
      assert.match(error.message, new RegExp(`^Invalid configuration: ${name} `));
      assert.ok(!error.message.includes(leaked), `${name} leaked: ${error.message}`);
      assert.match(error.message, /<redacted>/);
    }
  });

  await t.step("an ordinary variable's bad value is shown, so the operator can fix it", () => {
    const error = configError(ServiceSchema, { ...validEnv, LOG_LEVEL: "verbose" });
    assert.match(error.message, /LOG_LEVEL must be debug, info, warn or error \(got "verbose"\)/);
  });
});

Deno.test("loadConfig() applies the defaults of the shared building blocks", () => {
  const config = loadConfig(ServiceSchema, validEnv);
  assert.deepEqual(config, {
    PORT: 8080,
    HOST: "127.0.0.1",
    DATABASE_URL,
    MIGRATION_DATABASE_URL,
    PINNED_READ_POOLS: 2,
    INTERNAL_SECRET,
    LOG_LEVEL: "info",
    // The API limits are in every process's base, so gateway and services agree on them.
    PAGE_SIZE_MAX: 200,
    BULK_MAX_ROWS: 1000,
    KAFKA_CLIENT_ID: "printshop",
    KAFKA_SSL: false,
    BACKGROUND_WORK: "loops",
    KICK_URLS: [],
  });
  const extra = z.object({
    WORKERS: positiveInt(4, 64),
    DEBUG_SQL: bool(false),
    LEVEL: logLevel(),
  });
  assert.deepEqual(loadConfig(extra, {}), { WORKERS: 4, DEBUG_SQL: false, LEVEL: "info" });
  assert.equal(loadConfig(extra, { WORKERS: "64" }).WORKERS, 64);
  assert.match(configError(extra, { WORKERS: "65" }).message, /WORKERS must be at most 64/);
  assert.match(configError(extra, { WORKERS: "0" }).message, /WORKERS must be at least 1/);
});

Deno.test("PINNED_READ_POOLS: 0 turns pinned reads off; a count that is not whole, or negative, is refused", () => {
  assert.equal(
    loadConfig(ServiceSchema, { ...validEnv, PINNED_READ_POOLS: "0" }).PINNED_READ_POOLS,
    0,
  );
  assert.equal(
    loadConfig(ServiceSchema, { ...validEnv, PINNED_READ_POOLS: "8" }).PINNED_READ_POOLS,
    8,
  );
  assert.match(
    configError(ServiceSchema, { ...validEnv, PINNED_READ_POOLS: "-1" }).message,
    /PINNED_READ_POOLS must be 0 or more/,
  );
  assert.match(
    configError(ServiceSchema, { ...validEnv, PINNED_READ_POOLS: "1.5" }).message,
    /PINNED_READ_POOLS must be a whole number/,
  );
});

Deno.test("BACKGROUND_WORK and KICK_URLS: on demand, with the consumers' URLs listed", () => {
  const config = loadConfig(ServiceSchema, {
    ...validEnv,
    BACKGROUND_WORK: "on-demand",
    KICK_URLS: " https://webhooks.example.net/ , https://quotes.example.net",
  });
  assert.equal(config.BACKGROUND_WORK, "on-demand");
  assert.deepEqual(config.KICK_URLS, [
    "https://webhooks.example.net",
    "https://quotes.example.net",
  ]);
  assert.match(
    configError(ServiceSchema, { ...validEnv, BACKGROUND_WORK: "cron" }).message,
    /BACKGROUND_WORK must be loops or on-demand/,
  );
  assert.match(
    configError(ServiceSchema, { ...validEnv, KICK_URLS: "ftp://webhooks" }).message,
    /KICK_URLS/,
  );
});

Deno.test("loadConfig() ignores variables the schema does not name", () => {
  const config = loadConfig(ServiceSchema, { ...validEnv, PATH: "/usr/bin", UNRELATED: "x" });
  assert.ok(!("PATH" in config));
  assert.ok(!("UNRELATED" in config));
});

Deno.test("httpUrl() strips trailing slashes and refuses other schemes", async (t) => {
  const schema = z.object({ QUOTES_URL: httpUrl() });

  await t.step("trailing slashes go, so paths can be appended", () => {
    assert.equal(
      loadConfig(schema, { QUOTES_URL: "http://quotes:8080/" }).QUOTES_URL,
      "http://quotes:8080",
    );
    assert.equal(
      loadConfig(schema, { QUOTES_URL: "http://quotes:8080///" }).QUOTES_URL,
      "http://quotes:8080",
    );
    assert.equal(
      loadConfig(schema, { QUOTES_URL: "https://api.example.com/base/" }).QUOTES_URL,
      "https://api.example.com/base",
    );
    assert.equal(loadConfig(schema, { QUOTES_URL: "http://quotes" }).QUOTES_URL, "http://quotes");
  });

  await t.step("non-http schemes and non-URLs are refused naming the variable", () => {
    for (const value of ["ftp://quotes/", "quotes:8080", "not a url", "postgres://db/x"]) {
      const error = configError(schema, { QUOTES_URL: value });
      assert.match(error.message, /^Invalid configuration: QUOTES_URL must be an http\(s\) URL/);
    }
  });
});

Deno.test("bool() reads true/false/1/0 and refuses anything else", () => {
  const schema = z.object({ FLAG: bool(true) });
  assert.equal(loadConfig(schema, { FLAG: "true" }).FLAG, true);
  assert.equal(loadConfig(schema, { FLAG: "1" }).FLAG, true);
  assert.equal(loadConfig(schema, { FLAG: "false" }).FLAG, false);
  assert.equal(loadConfig(schema, { FLAG: "0" }).FLAG, false);
  assert.equal(loadConfig(schema, {}).FLAG, true, "unset takes the default");
  assert.equal(loadConfig(schema, { FLAG: "" }).FLAG, true, "empty takes the default");
  assert.equal(loadConfig(z.object({ FLAG: bool(false) }), {}).FLAG, false);
  for (const value of ["yes", "no", "2", "on"]) {
    assert.match(
      configError(schema, { FLAG: value }).message,
      new RegExp(`FLAG must be true or false \\(got "${value}"\\)`),
    );
  }
});

Deno.test("postgresUrl() accepts postgres:// and postgresql:// only", () => {
  const schema = z.object({ DB: postgresUrl() });
  assert.equal(loadConfig(schema, { DB: "postgres://h/db" }).DB, "postgres://h/db");
  assert.equal(loadConfig(schema, { DB: "postgresql://h/db" }).DB, "postgresql://h/db");
  assert.match(
    configError(schema, { DB: "mysql://h/db" }).message,
    /DB must be a postgres:\/\/ URL/,
  );
});

Deno.test("port() accepts 0 (any free port) and 65535", () => {
  const schema = z.object({ P: port(1) });
  assert.equal(loadConfig(schema, { P: "0" }).P, 0);
  assert.equal(loadConfig(schema, { P: "65535" }).P, 65535);
});

Deno.test("loadConfig() reads KAFKA_BROKERS as a host:port list and names a bad entry", () => {
  const config = loadConfig(ServiceSchema, {
    ...validEnv,
    KAFKA_BROKERS: "kafka-1:9092, kafka-2.internal:9093",
  });
  assert.deepEqual(config.KAFKA_BROKERS, ["kafka-1:9092", "kafka-2.internal:9093"]);
  assert.match(
    configError(ServiceSchema, { ...validEnv, KAFKA_BROKERS: "kafka:9092,http://x" }).message,
    /^Invalid configuration: KAFKA_BROKERS.* must list host:port pairs/,
  );
  assert.match(
    configError(ServiceSchema, { ...validEnv, KAFKA_SASL_MECHANISM: "md5" }).message,
    /KAFKA_SASL_MECHANISM must be plain, scram-sha-256 or scram-sha-512/,
  );
});
