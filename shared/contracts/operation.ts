/**
 * How an operation is declared: once, in its service's contract module. The gateway's route
 * table, the OpenAPI document, the service's handler registration and its input validation all
 * read these declarations; nothing else repeats a path, a scope or a schema.
 */
import type { z } from "zod";
import type { Scope } from "../scopes.ts";
import type { EventType } from "./platform.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type SuccessStatus = 200 | 201 | 204;

/**
 * What the document shows for an operation where its schemas' own examples do not tell the
 * story (a create answers a fresh row, a status change the quote in its new status). Everything
 * not given here comes from the first example of the schema concerned; the OpenAPI tests check
 * every example against its schema.
 */
export interface OperationExamples {
  /** Query parameters of the example request, as a client sends them. */
  query?: Readonly<Record<string, string>>;
  /** The example request body, when the body schema's example does not fit this operation. */
  body?: unknown;
  /** The example answer's `data` by status, when the data schema's example does not fit. */
  responses?: Partial<Record<SuccessStatus, unknown>>;
}

/** One operation of a resource. */
export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI-style template; every `{name}` is a UUID unless `params` says otherwise. */
  path: string;
  /** Required scope; null means any valid credential. */
  scope: Scope | null;
  /**
   * Scopes needed besides `scope`: an operation whose input or answer is itself cost data (the
   * pricing preview reads costs and answers the markups) needs `costs.read` as well.
   */
  alsoRequires?: readonly Scope[];
  summary: string;
  /** Path parameters that are not UUIDs (a client-chosen key, say), by name. */
  params?: Readonly<Record<string, z.ZodType<string, string>>>;
  /** The query string; without one, any query parameter is refused by name. */
  query?: z.ZodObject;
  /** The JSON body; without one, only an empty body or `{}` is accepted. */
  body?: z.ZodType;
  /** Schema of the success envelope's `data`, by HTTP status. */
  responses: Partial<Record<SuccessStatus, z.ZodType>>;
  /** Every event the operation may write (checked whenever contract checks are on). */
  events?: readonly EventType[];
  /**
   * True when an unknown id in the path is answered as a success rather than 404 (an
   * unsubscribe that finds nothing to remove); the document then lists no 404.
   */
  unknownIdSucceeds?: true;
  examples?: OperationExamples;
}

/** A declared operation: its spec, its name and the tag it is listed under. */
export type Operation<Id extends string = string, S extends OperationSpec = OperationSpec> =
  & S
  & { readonly operationId: Id; readonly tag: string };

export type OperationMap = Readonly<Record<string, Operation>>;

/**
 * Declares the operations of one resource, listed under one tag of the document. The keys are
 * the operationIds.
 */
export function operations<const T extends Record<string, OperationSpec>>(
  tag: string,
  specs: T,
): { readonly [K in keyof T & string]: Operation<K, T[K]> } {
  return Object.fromEntries(
    Object.entries(specs).map((
      [operationId, spec],
    ) => [operationId, { ...spec, operationId, tag }]),
  ) as { readonly [K in keyof T & string]: Operation<K, T[K]> };
}

/**
 * A public HTML page a service renders and the gateway serves with no credential (the proof
 * approval page): the gateway forwards it, with a signed context naming the visitor, to the
 * service's internal path. Its path parameter is an opaque token the service verifies.
 */
export interface PageSpec {
  /** The public path template, outside `/v1` (`/approve/{token}`). */
  path: string;
  /** Where the owning service answers it, with the same parameters. */
  internalPath: string;
  /**
   * The scope of the signed context the gateway forwards a visit with: one no credential can
   * hold, so only the gateway's forwarding reaches the internal path.
   */
  internalScope: string;
  methods: readonly ("GET" | "POST")[];
  summary: string;
  /**
   * The label the key of the page's link tokens (its path's `{token}`) is derived with from the
   * internal secret (`shared/link_token.ts`). The gateway checks a token with it before anything
   * else: a forged one is counted against the visitor's address, never against a link.
   */
  linkTokenLabel: string;
  /**
   * What each link may be asked each minute, by method (HEAD counts as GET), across every
   * gateway replica: a page has no credential to count by, and a genuine link is never refused
   * for the address it is opened from.
   */
  requestsPerMinutePerLink: Readonly<Record<"GET" | "POST", number>>;
  /** The largest form a visitor may post. */
  maxBodyBytes: number;
  /** Every event the page may write (checked whenever contract checks are on). */
  events: readonly EventType[];
}

/**
 * The document's tags a service lists its operations under, each with what those operations are
 * for (one line, shown as the tag's description in `/docs`). A service declares every tag its
 * operations use; `platform_test.ts` fails on one it does not.
 */
export type TagDescriptions = Readonly<Record<string, string>>;

/** Everything one service (or the gateway) answers for. */
export interface ServiceContract<
  S extends string = string,
  O extends OperationMap = OperationMap,
> {
  readonly service: S;
  readonly operations: O;
  /** The tags its operations are listed under, with their descriptions. */
  readonly tags: TagDescriptions;
  /** Public pages, by name; most services have none. */
  readonly pages: Readonly<Record<string, PageSpec>>;
}

/** What a service declares beside its operations. */
export interface ServiceContractParts {
  tags?: TagDescriptions;
  pages?: Readonly<Record<string, PageSpec>>;
}

export function serviceContract<const S extends string, const O extends OperationMap>(
  service: S,
  operations: O,
  { tags = {}, pages = {} }: ServiceContractParts = {},
): ServiceContract<S, O> {
  return { service, operations, tags, pages };
}

// ---------------------------------------------------------------------------------------------
// Types a handler is checked against.

type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | ParamNames<Rest>
  : never;

/** The path parameters of an operation, by name, validated (UUIDs lower-cased). */
export type ParamsOf<O extends OperationSpec> = { readonly [K in ParamNames<O["path"]>]: string };

/** The validated query; `{}` when the operation declares none. */
export type QueryOf<O extends OperationSpec> = O["query"] extends z.ZodType ? z.output<O["query"]>
  : Record<string, never>;

/** The validated body; `{}` when the operation declares none. */
export type BodyOf<O extends OperationSpec> = O["body"] extends z.ZodType ? z.output<O["body"]>
  : Record<string, never>;

export type StatusOf<O extends OperationSpec> = keyof O["responses"] & SuccessStatus;

export type DataOf<O extends OperationSpec, S extends StatusOf<O>> = O["responses"][S] extends
  z.ZodType ? z.output<O["responses"][S]> : never;
