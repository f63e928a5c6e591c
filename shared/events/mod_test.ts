import assert from "node:assert/strict";
import { RUN_FLAGS } from "../launcher.ts";
import { createTestDatabase } from "../testing/db.ts";

const ROOT = new URL("../../", import.meta.url);

// kafkajs is CommonJS: the modules a process has loaded are in require's cache.
const CHILD = `import { createRequire } from "node:module";
import { createLogger } from "./shared/log.ts";
import "./shared/service_main.ts";
import { openEventBus } from "./shared/events/mod.ts";
const kafkajsLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes("kafkajs"));
const logger = createLogger({ level: "error" });
const base = { DATABASE_URL: Deno.env.get("DATABASE_URL"), KAFKA_CLIENT_ID: "test", KAFKA_SSL: false };
const seen = { atStart: kafkajsLoaded() };
const embedded = await openEventBus(base, logger);
seen.embedded = [embedded.transport, kafkajsLoaded()];
await embedded.close();
const kafka = await openEventBus({ ...base, KAFKA_BROKERS: ["127.0.0.1:9"] }, logger);
seen.kafka = [kafka.transport, kafkajsLoaded()];
await kafka.close();
console.log(JSON.stringify(seen));`;

Deno.test("a process on the embedded transport never loads kafkajs; one on Kafka does", async () => {
  const db = await createTestDatabase();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", ...RUN_FLAGS, CHILD],
      cwd: ROOT.pathname,
      env: { DATABASE_URL: db.url },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
      atStart: false,
      embedded: ["embedded", false],
      kafka: ["kafka", true],
    });
  } finally {
    await db.drop();
  }
});
