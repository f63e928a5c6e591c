import { type AsyncApiDocument, asyncApiDocument } from "../events/asyncapi.ts";
import { canConnect, freePort, sleep } from "../net.ts";

const BINARY = new URL(
  "../../node_modules/@go-mokapi/linux-x64/bin/mokapi",
  import.meta.url,
);
const START_TIMEOUT_MS = 10_000;
const OUTPUT_LIMIT = 64 * 1024;

/**
 * Consumer settings tests need against Mokapi: with kafkajs's defaults two members of one group
 * can both be handed every partition.
 */
export const MOKAPI_CONSUMER_TUNING = {
  heartbeatInterval: 300,
  maxWaitTimeInMs: 300,
  sessionTimeout: 6000,
} as const;

/**
 * Producer settings tests need against Mokapi 0.52: it refuses an idempotent producer's second
 * batch of several records to a partition (it compares each record with the last stored
 * sequence number rather than with the record before it).
 */
export const MOKAPI_PRODUCER_TUNING = { idempotent: false } as const;

export interface MokapiOptions {
  /** Partitions of every topic; the AsyncAPI document's own count by default. */
  partitions?: number;
}

/** A Mokapi process speaking the Kafka protocol, with the topics of the AsyncAPI document. */
export interface Mokapi {
  brokers: string[];
  port: number;
  /** Stops the process and removes its files; `restart()` can bring it back. */
  stop(): Promise<void>;
  /** Starts a fresh process on the same port (stopping a running one): everything is lost. */
  restart(): Promise<void>;
  /** The broker's recent output (the last 64 KiB), e.g. why it refused a record. */
  output(): string;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Running {
  child: Deno.ChildProcess;
  dir: string;
  output: Promise<void>;
}

/**
 * Starts Mokapi (the Kafka wire protocol, kept in memory) for a test, serving the topics and
 * schemas of `asyncApiDocument()`, so a payload that breaks an event schema is refused.
 * `stop()` then `restart()` simulates an outage: the broker comes back on the same port, empty.
 */
export async function startMokapi(options: MokapiOptions = {}): Promise<Mokapi> {
  const port = freePort();
  const document = JSON.stringify(mokapiDocument(port, options.partitions));
  let output = "";
  const append = (text: string): void => {
    output = (output + text).slice(-OUTPUT_LIMIT);
  };

  const spawn = async (): Promise<Running> => {
    const dir = await Deno.makeTempDir({ prefix: "printshop-mokapi-" });
    await Deno.writeTextFile(`${dir}/asyncapi.json`, document);
    const child = new Deno.Command(BINARY, {
      args: [
        "--providers-file-directory",
        dir,
        "--api-port",
        String(freePort()),
        "--health-port",
        String(freePort()),
        "--mcp-server-enabled=false",
        "--api-search-enabled=false",
        "--event-store-default-size",
        "10",
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const drain = async (stream: ReadableStream<Uint8Array>): Promise<void> => {
      for await (const text of stream.pipeThrough(new TextDecoderStream())) append(text);
    };
    const running: Running = {
      child,
      dir,
      output: Promise.all([drain(child.stdout), drain(child.stderr)]).then(() => {}),
    };
    // A bad spec or a busy port is only logged, so the port answering is the only sign of life.
    const deadline = Date.now() + START_TIMEOUT_MS;
    let exited = false;
    void child.status.then(() => {
      exited = true;
    });
    while (!(await canConnect(port))) {
      if (exited || Date.now() > deadline) {
        await halt(running);
        throw new Error(
          `Mokapi did not accept connections on port ${port} within ${START_TIMEOUT_MS} ms:\n${output}`,
        );
      }
      await sleep(25);
    }
    return running;
  };

  let current: Running | undefined;
  // A test that dies without stopping the broker must not leave an orphan behind.
  const kill = (): void => {
    if (current === undefined) return;
    try {
      current.child.kill("SIGKILL");
      Deno.removeSync(current.dir, { recursive: true });
    } catch {
      // already gone
    }
  };
  const start = async (): Promise<void> => {
    current = await spawn();
    globalThis.addEventListener("unload", kill);
  };
  const stop = async (): Promise<void> => {
    globalThis.removeEventListener("unload", kill);
    const running = current;
    current = undefined;
    if (running !== undefined) await halt(running);
  };

  await start();
  return {
    brokers: [`127.0.0.1:${port}`],
    port,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    output: () => output,
    [Symbol.asyncDispose]: stop,
  };
}

async function halt(running: Running): Promise<void> {
  try {
    running.child.kill("SIGTERM");
  } catch {
    // already exited
  }
  await running.child.status;
  await running.output;
  await Deno.remove(running.dir, { recursive: true }).catch(() => {});
}

/**
 * The AsyncAPI document as Mokapi can enforce it. Mokapi 0.52 tries a record against each message
 * of a channel in turn but reads the record's value only once, so against a channel of several
 * messages every record after the first failed attempt is refused with "unexpected end of JSON
 * input". Each channel therefore gets one message whose payload is `oneOf` the event envelopes;
 * the `type` constant of each envelope keeps that exactly as strict.
 */
function mokapiDocument(port: number, partitions: number | undefined): AsyncApiDocument {
  const document = asyncApiDocument({
    servers: {
      test: {
        host: `127.0.0.1:${port}`,
        bindings: { kafka: { "group.initial.rebalance.delay.ms": 1000 } },
      },
    },
  });
  const messages = document.components.messages;
  for (const [channelId, channel] of Object.entries(document.channels)) {
    if (partitions !== undefined) channel.bindings.kafka.partitions = partitions;
    const envelopes = Object.values(channel.messages).map((ref) => {
      const message = messages[ref.$ref.slice("#/components/messages/".length)];
      if (message === undefined) throw new Error(`Unresolvable message reference "${ref.$ref}"`);
      return message;
    });
    const first = envelopes[0];
    if (first === undefined) continue;
    const id = `${channelId}.any`;
    messages[id] = {
      ...first,
      name: id,
      title: id,
      summary: `Any event on ${channel.address}`,
      payload: { oneOf: envelopes.map((m) => m.payload) },
    };
    channel.messages = { any: { $ref: `#/components/messages/${id}` } };
    for (const operation of Object.values(document.operations)) {
      if (operation.channel.$ref === `#/channels/${channelId}`) {
        operation.messages = [{ $ref: `#/channels/${channelId}/messages/any` }];
      }
    }
  }
  return document;
}
