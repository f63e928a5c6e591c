/**
 * A service's HTTP app, built from its contract: every declared operation gets its handler, and
 * before a handler runs its scope is checked and its path, query and body are validated against
 * the declaration. A handler receives typed, validated input and answers with a typed reply; it
 * cannot forget a check, and a missing or extra handler does not compile.
 */
import { missingScope } from "./scopes.ts";
import type { Hono } from "hono";
import type {
  BodyOf,
  DataOf,
  Operation,
  OperationMap,
  ParamsOf,
  QueryOf,
  ServiceContract,
  StatusOf,
  SuccessStatus,
} from "./contracts/operation.ts";
import { ApiError, insufficientScope } from "./http/errors.ts";
import { envelopeParts, envelopeText } from "./http/envelope.ts";
import { parseOperationInput } from "./http/operation_input.ts";
import type { InternalContext } from "./internal_context.ts";
import type { Logger } from "./log.ts";
import { assertMayFilterCosts, assertMayWriteCosts, canSeeCosts } from "./costs.ts";
import { assertMatches, CONTRACT_CHECKS, runChecked } from "./contract_checks.ts";
import { toHonoPath } from "./routes.ts";
import { withOrganization } from "./db/tenancy.ts";
import type { ServiceDeps } from "./service_main.ts";
import { type ServiceContext, serviceDefaults, type ServiceEnv } from "./service_defaults.ts";

/**
 * JSON text that is already one valid JSON value of type T (built by the database, say): sent
 * as it is, neither parsed nor stringified again.
 */
export class JsonText<T> {
  declare readonly _data: T;
  constructor(readonly text: string) {}
}

export function jsonText<T>(text: string): JsonText<T> {
  return new JsonText<T>(text);
}

/**
 * UTF-8 JSON that arrives over time (a page the database sends row by row) and whose chunks
 * together are one valid JSON value of type T: each chunk is sent as it comes, so the answer
 * goes out while the rest is still being read. If the stream errors part way, the answer is cut
 * short (the connection closes before its end), never completed with a status it did not earn.
 */
export class JsonStream<T> {
  declare readonly _data: T;
  constructor(readonly body: ReadableStream<Uint8Array>) {}
}

export function jsonStream<T>(body: ReadableStream<Uint8Array>): JsonStream<T> {
  return new JsonStream<T>(body);
}

/** What a handler is given. */
export interface Call<O extends Operation> {
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  /** Who is calling, as the gateway signed it. */
  auth: InternalContext;
  /** The caller's organisation: every read and write is scoped by it. */
  organizationId: string;
  /** Whether the caller holds costs.read (cost fields are shown only then). */
  costs: boolean;
  log: Logger;
  /** The request itself, for the rare handler that needs more. */
  c: ServiceContext;
}

type ReplyAt<O extends Operation, S extends StatusOf<O>> =
  & {
    data: DataOf<O, S> | JsonText<DataOf<O, S>> | JsonStream<DataOf<O, S>>;
    /** The envelope's message; "OK" unless given. */
    message?: string;
    /** The envelope's `status`: the operation's own outcome (spec 2.1); true unless given. */
    result?: boolean;
  }
  & (S extends 200 ? { status?: S } : { status: S });

/** A handler's answer: one of the operation's declared statuses with its data. */
export type Reply<O extends Operation> = { [S in StatusOf<O>]: ReplyAt<O, S> }[StatusOf<O>];

export type Handler<O extends Operation> = (call: Call<O>) => Promise<Reply<O>> | Reply<O>;

/** One handler per operation of `Ops`, keyed by operationId. */
export type Handlers<Ops extends OperationMap> = { [K in keyof Ops]: Handler<Ops[K]> };

/** Handlers for exactly the operations of `Ops`: a missing one or an extra one is an error. */
export type ExactHandlers<Ops extends OperationMap, H> =
  & Handlers<Ops>
  & { [K in Exclude<keyof H, keyof Ops>]: never };

export interface ServiceAppOptions {
  /** Readiness for /healthz beyond the database answering; throw to report not ready. */
  ready?: () => Promise<void>;
  /** Hold handlers to the contract while they run (see contract_checks.ts); the env's setting. */
  contractChecks?: boolean;
}

/**
 * The service's app: the shared defaults (request ids, logging, tracing, /healthz, internal
 * context, error envelopes) and one route per operation of its contract.
 */
export function createServiceApp<Ops extends OperationMap, H extends Handlers<Ops>>(
  contract: ServiceContract<string, Ops>,
  deps: Pick<ServiceDeps<unknown>, "sql" | "logger" | "contextKey">,
  handlers: H & ExactHandlers<Ops, H>,
  options: ServiceAppOptions = {},
): Hono<ServiceEnv> {
  const app = serviceDefaults({
    service: contract.service,
    logger: deps.logger,
    contextKey: deps.contextKey,
    ready: async () => {
      await deps.sql`SELECT 1`;
      await options.ready?.();
    },
  });
  const checks = options.contractChecks ?? CONTRACT_CHECKS;
  const all: readonly Operation[] = Object.values(contract.operations);
  for (const operation of all) {
    const hint = searchHint(operation, all);
    const handler = handlers[operation.operationId as keyof Ops] as unknown as Handler<Operation>;
    app.on(operation.method, toHonoPath(operation.path), async (c) => {
      const auth = c.get("auth");
      const lacking = missingScope(operation, auth.scopes);
      if (lacking !== null) throw insufficientScope(lacking);
      const params = c.req.param() as Record<string, string>;
      let input: ReturnType<typeof parseOperationInput<Operation>>;
      try {
        input = parseOperationInput(operation, {
          params,
          query: new URL(c.req.url).search,
          // A request without a body (every GET) has nothing to read: no stream, no decoding.
          body: c.req.raw.body === null ? "" : await c.req.text(),
        });
      } catch (error) {
        throw hint ? withSearchHint(error, hint, params) : error;
      }
      assertMayWriteCosts(auth.scopes, input.body);
      assertMayFilterCosts(auth.scopes, input.query as Record<string, unknown>, input.body);
      // Every transaction the handler opens serves the caller's organisation, and only it: the
      // row-level policies see to it (shared/db/tenancy.ts).
      const call = (): ReturnType<Handler<Operation>> =>
        withOrganization(auth.organizationId, () =>
          handler({
            ...input,
            auth,
            organizationId: auth.organizationId,
            costs: canSeeCosts(auth.scopes),
            log: c.get("log"),
            c,
          }));
      const reply = checks
        ? await runChecked(
          { operationId: operation.operationId, events: operation.events ?? [] },
          call,
        )
        : await call();
      return send(c, operation, reply as ReplyAt<Operation, SuccessStatus>, checks);
    });
  }
  return app;
}

/** A list to suggest when an operation's last path id is not a UUID (a reference given instead). */
interface SearchHint {
  param: string;
  /** The list's path, e.g. `/v1/quotes`. */
  list: string;
}

/**
 * For `/v1/quotes/{quoteId}`: the list at `/v1/quotes` when the contract declares one whose query
 * takes `search`, so a caller who sent a reference (`Q-00001`) where the id goes can be told how
 * to find it.
 */
function searchHint(operation: Operation, all: readonly Operation[]): SearchHint | null {
  const match = operation.path.match(/^(.*)\/\{(\w+)\}$/);
  if (!match) return null;
  const [, list, param] = match as unknown as [string, string, string];
  const searchable = all.some((o) =>
    o.method === "GET" && o.path === list && o.query !== undefined && "search" in o.query.shape
  );
  return searchable ? { param, list } : null;
}

function withSearchHint(error: unknown, hint: SearchHint, params: Record<string, string>): unknown {
  const value = params[hint.param] ?? "";
  if (!(error instanceof ApiError) || error.details?.[0]?.path !== hint.param || value === "") {
    return error;
  }
  const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
  return new ApiError(
    error.code,
    `${error.message}; to find one by a reference or name such as "${shown}", use GET ${hint.list}` +
      `?search=${encodeURIComponent(value.slice(0, 200))}`,
    error.details,
  );
}

/** Writes the success envelope; with contract checks on, `data` must match its schema. */
async function send(
  c: ServiceContext,
  operation: Operation,
  reply: ReplyAt<Operation, SuccessStatus>,
  checks: boolean,
): Promise<Response> {
  const status = reply.status ?? 200;
  const schema = operation.responses[status];
  if (schema === undefined) {
    throw new Error(`${operation.operationId} answered ${status}, which it does not declare`);
  }
  let data = reply.data;
  if (checks && data instanceof JsonStream) {
    // A checked stream is read out first; what it gave is then sent as a stream all the same.
    const bytes = await new Response(data.body).bytes();
    assertMatches(schema, JSON.parse(decoder.decode(bytes)), checkedAnswer(operation, status));
    data = jsonStream(ReadableStream.from([bytes]));
  } else if (checks) {
    const value = data instanceof JsonText ? JSON.parse(data.text) : data;
    assertMatches(schema, value, checkedAnswer(operation, status));
  }
  if (status === 204) return c.body(null, 204);
  const headers = { "Content-Type": "application/json" };
  if (data instanceof JsonStream) {
    const [head, tail] = envelopeParts(reply.message, reply.result);
    return c.body(enveloped(data.body, head, tail, c.get("log")), status, headers);
  }
  const text = data instanceof JsonText ? data.text : JSON.stringify(data);
  return c.body(envelopeText(text, reply.message, reply.result), status, headers);
}

const checkedAnswer = (operation: Operation, status: number): string =>
  `The ${status} answer of ${operation.operationId}`;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `data` inside the envelope's `head` and `tail`, chunk by chunk as it arrives. */
function enveloped(
  data: ReadableStream<Uint8Array>,
  head: string,
  tail: string,
  log: Logger,
): ReadableStream<Uint8Array> {
  const reader = data.getReader();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(head));
    },
    async pull(controller) {
      try {
        const next = await reader.read();
        if (!next.done) return controller.enqueue(next.value);
        controller.enqueue(encoder.encode(tail));
        controller.close();
      } catch (error) {
        // The status and part of the answer are out: all that is left is to cut it short.
        log.error("answer cut short: its data failed part way", { error: String(error) });
        controller.error(error);
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
