/**
 * Just enough HTTP/1.1 framing for the edge to know where each request and response begins and
 * ends, without changing a byte: the edge forwards what it reads and needs only to know whether a
 * connection is idle, mid-head, mid-body or owed an answer. Request heads are checked strictly
 * here, because anything Deno's own server would refuse it refuses with an empty 400; refusing
 * first is what gives the client an error envelope. Pure: no I/O, no clock.
 */
import { concatBytes } from "@printshop/shared/bytes";
import { MAX_HEADER_COUNT } from "@printshop/shared/limits";
import { type Refusal, refusal } from "./refusals.ts";

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const COLON = 58;
const SEMICOLON = 59;

/** Shared by every framer that holds nothing: an idle connection should cost next to nothing. */
const NO_BYTES = new Uint8Array(0);
/** A chunk-size line (size and extensions) longer than this is refused: nobody needs more. */
const MAX_CHUNK_LINE_BYTES = 4096;
/** 13 hex digits are 52 bits, the most a JavaScript number counts exactly. */
const MAX_CHUNK_SIZE_DIGITS = 13;
/** " HTTP/1.1\r": what may follow a target on its line. */
const VERSION_BYTES = 10;

export interface HeadLimits {
  maxHeaderBytes: number;
  maxUrlBytes: number;
}

export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" };

export interface RequestHead {
  method: string;
  version: "HTTP/1.0" | "HTTP/1.1";
  body: BodyFraming;
  /** Whether it names its host: an HTTP/1.0 request may not, and is then given one. */
  hasHost: boolean;
  /** Whether it waits for `100 Continue` before sending its body (`Expect: 100-continue`). */
  expectsContinue: boolean;
}

/**
 * What a chunk of client bytes meant, in order. `data` is to be forwarded (a view of the chunk
 * or of the buffered head, valid until the next push); `head` comes before its bytes; `refuse`
 * is last, and nothing after it is forwarded.
 */
export type RequestEvent =
  | { type: "head"; head: RequestHead }
  | { type: "data"; bytes: Uint8Array }
  | { type: "end" }
  | { type: "refuse"; refusal: Refusal; during: "head" | "body" };

export type RequestPhase = "idle" | "head" | "body";

/**
 * One push: the events of at most one request, and how much of the chunk they took. A push
 * stops where a request ends, so that the next is held back until this one is answered.
 */
export interface RequestStep {
  events: RequestEvent[];
  /** Bytes of the chunk taken; the rest is for the next push. */
  consumed: number;
  /** Whether a request ended in this step. */
  ended: boolean;
}

// tchar (RFC 9110 §5.6.2): the bytes of a method or a field name.
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 65; c <= 90; c++) TCHAR[c] = TCHAR[c + 32] = 1;

/** Field-value bytes: visible ASCII, space, tab and obs-text; never a control byte. */
const isValueByte = (b: number): boolean => (b >= 0x20 && b !== 0x7f) || b === HTAB;
/** Request-target bytes: visible ASCII and (as Deno's server accepts) raw UTF-8. */
const isTargetByte = (b: number): boolean => b > 0x20 && b !== 0x7f;

/** bytes[from, to) as a string of their character codes (a loop: spreading allocates). */
function ascii(bytes: Uint8Array, from: number, to: number): string {
  let text = "";
  for (let i = from; i < to; i++) text += String.fromCharCode(bytes[i]!);
  return text;
}

/** Whether bytes[from, from + text.length) spell `text` exactly. */
function spells(bytes: Uint8Array, from: number, text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (bytes[from + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** The methods clients send, as strings made once: a head's method is then found, not built. */
const COMMON_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

function methodOf(bytes: Uint8Array, length: number): string {
  for (const method of COMMON_METHODS) {
    if (method.length === length && spells(bytes, 0, method)) return method;
  }
  return ascii(bytes, 0, length);
}

/** Whether bytes[from, to) spell `name`, ignoring ASCII case (`name` is lower case). */
function isName(bytes: Uint8Array, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let i = 0; i < name.length; i++) {
    if ((bytes[from + i]! | 0x20) !== name.charCodeAt(i)) return false;
  }
  return true;
}

export interface RequestLine {
  method: string;
  version: "HTTP/1.0" | "HTTP/1.1";
}

/** Checks `METHOD SP target SP HTTP/1.x` in bytes[0, end) (end excludes the CR). */
function parseRequestLine(
  bytes: Uint8Array,
  end: number,
  limits: HeadLimits,
): RequestLine | Refusal {
  const bad = (what: string): Refusal =>
    refusal("bad_request", `Malformed request line: ${what}; send "METHOD /path HTTP/1.1"`);
  const sp1 = bytes.indexOf(SP);
  if (sp1 <= 0 || sp1 >= end) return bad("no method");
  for (let i = 0; i < sp1; i++) if (!TCHAR[bytes[i]!]) return bad("the method is not a token");
  if (sp1 === 7 && spells(bytes, 0, "CONNECT")) {
    // A tunnel through an origin server: nothing here is a proxy, and nothing may tunnel past it.
    return refusal("bad_request", "CONNECT is not served here: this is an API, not a proxy");
  }
  let sp2 = sp1 + 1;
  while (sp2 < end && bytes[sp2] !== SP) sp2++;
  const targetLength = sp2 - sp1 - 1;
  if (targetLength > limits.maxUrlBytes) return uriTooLong(limits);
  if (sp2 >= end || targetLength === 0) return bad("no target or no version");
  for (let i = sp1 + 1; i < sp2; i++) {
    if (!isTargetByte(bytes[i]!)) return bad("the target holds a space or control byte");
  }
  const first = bytes[sp1 + 1];
  // Origin form (/path), asterisk form, or absolute form (http://host/path): nothing else is
  // meaningful to an origin server, and Deno's server refuses what is left.
  if (
    first !== 0x2f && !(targetLength === 1 && first === 0x2a) &&
    !/^https?:\/\/[^/]/i.test(ascii(bytes, sp1 + 1, Math.min(sp2, sp1 + 16)))
  ) {
    return bad("the target must start with /");
  }
  const version = end - sp2 - 1 === 8 && spells(bytes, sp2 + 1, "HTTP/1.")
    ? bytes[end - 1] === 0x31 ? "HTTP/1.1" : bytes[end - 1] === 0x30 ? "HTTP/1.0" : null
    : null;
  if (version === null) {
    return refusal(
      "bad_request",
      `HTTP version "${ascii(bytes, sp2 + 1, Math.min(end, sp2 + 17))}" is not served here; ` +
        "use HTTP/1.1",
    );
  }
  return { method: methodOf(bytes, sp1), version };
}

const uriTooLong = (limits: HeadLimits): Refusal =>
  refusal(
    "uri_too_long",
    `The URL is longer than ${limits.maxUrlBytes} bytes; send long filters in a request body`,
  );
const headTooLarge = (limits: HeadLimits): Refusal =>
  refusal(
    "request_header_fields_too_large",
    `The request's header fields exceed ${limits.maxHeaderBytes} bytes or ${MAX_HEADER_COUNT} ` +
      "fields; send fewer or shorter headers",
  );

/**
 * Parses a complete request head, bytes[0, length) ending in CRLF CRLF, and decides how its
 * body is framed; a refusal for anything Deno's server would refuse or the edge does not serve.
 */
export function parseRequestHead(
  bytes: Uint8Array,
  limits: HeadLimits,
  /** The request line, when the caller has checked it already. */
  checkedLine?: RequestLine,
): RequestHead | Refusal {
  const bad = (message: string): Refusal => refusal("bad_request", message);
  if (bytes.length > limits.maxHeaderBytes) return headTooLarge(limits);
  const lineEnd = bytes.indexOf(LF);
  const line = checkedLine ?? parseRequestLine(bytes, lineEnd - 1, limits);
  if ("code" in line) return line;
  let contentLength: string | null = null;
  let transferEncoding: string | null = null;
  let hosts = 0;
  let expectsContinue = false;
  let fields = 0;
  let start = lineEnd + 1;
  // The head ends with an empty line: stop at its CR.
  while (start < bytes.length - 2) {
    const end = bytes.indexOf(LF, start);
    const last = end - 1; // the CR, checked when the head was scanned
    if (++fields > MAX_HEADER_COUNT) return headTooLarge(limits);
    const firstByte = bytes[start]!;
    if (firstByte === SP || firstByte === HTAB) {
      return bad("Header fields may not be folded over lines (obs-fold); send each on one line");
    }
    let colon = start;
    while (colon < last && TCHAR[bytes[colon]!]) colon++;
    if (colon === start || colon === last || bytes[colon] !== COLON) {
      return bad("Malformed header field: send `Name: value` with no space before the colon");
    }
    let valueStart = colon + 1;
    while (valueStart < last && (bytes[valueStart] === SP || bytes[valueStart] === HTAB)) {
      valueStart++;
    }
    let valueEnd = last;
    while (valueEnd > valueStart && (bytes[valueEnd - 1] === SP || bytes[valueEnd - 1] === HTAB)) {
      valueEnd--;
    }
    for (let i = valueStart; i < valueEnd; i++) {
      if (!isValueByte(bytes[i]!)) {
        return bad(`Header "${ascii(bytes, start, colon)}" holds a control character`);
      }
    }
    if (isName(bytes, start, colon, "content-length")) {
      const value = ascii(bytes, valueStart, valueEnd);
      if (!/^\d+$/.test(value)) {
        return bad(`Content-Length must be a whole number of bytes (got "${value.slice(0, 32)}")`);
      }
      if (contentLength !== null && contentLength !== value) {
        return bad("Content-Length is given twice with different values");
      }
      contentLength = value;
    } else if (isName(bytes, start, colon, "transfer-encoding")) {
      const value = ascii(bytes, valueStart, valueEnd);
      transferEncoding = transferEncoding === null ? value : `${transferEncoding}, ${value}`;
    } else if (isName(bytes, start, colon, "host")) {
      if (++hosts > 1) return bad("Host is given more than once");
    } else if (isName(bytes, start, colon, "expect")) {
      expectsContinue ||= isName(bytes, valueStart, valueEnd, "100-continue");
    }
    start = end + 1;
  }
  let body: BodyFraming = { kind: "none" };
  if (transferEncoding !== null) {
    // Both framings at once is the classic request-smuggling shape; refuse rather than pick one.
    if (contentLength !== null) {
      return bad("Content-Length and Transfer-Encoding may not both be sent; send one");
    }
    if (line.version === "HTTP/1.0") return bad("HTTP/1.0 has no Transfer-Encoding");
    if (transferEncoding.trim().toLowerCase() !== "chunked") {
      return bad(
        `Transfer-Encoding "${transferEncoding.slice(0, 32)}" is not supported; send chunked`,
      );
    }
    body = { kind: "chunked" };
  } else if (contentLength !== null) {
    const length = Number(contentLength);
    if (!Number.isSafeInteger(length)) {
      return refusal("payload_too_large", "Content-Length is beyond any body this API accepts");
    }
    if (length > 0) body = { kind: "length", length };
  }
  // RFC 9112 §3.2: without it the app's server would build the request's URL from nothing.
  if (hosts === 0 && line.version === "HTTP/1.1") {
    return bad("An HTTP/1.1 request must name its host in a Host header");
  }
  return {
    method: line.method,
    version: line.version,
    body,
    hasHost: hosts > 0,
    expectsContinue,
  };
}

/**
 * A head (as checked by parseRequestHead) without its `name` fields: for the edge that answers
 * `Expect: 100-continue` itself, so that the app does not answer it again.
 */
export function withoutField(head: Uint8Array, name: string): Uint8Array {
  const kept: Uint8Array[] = [];
  let start = 0;
  while (start < head.length) {
    const end = head.indexOf(LF, start) + 1;
    const colon = head.indexOf(COLON, start);
    const named = start > 0 && colon !== -1 && colon < end && isName(head, start, colon, name);
    if (!named) kept.push(head.subarray(start, end));
    start = end;
  }
  return concatBytes(kept);
}

/**
 * Follows a chunked body (RFC 9112 §7.1) byte by byte, trailers included, to find where it ends.
 * `push` answers how many bytes from `from` belong to the body; fewer than offered means it
 * ended there.
 */
export class ChunkedBody {
  #state:
    | "size"
    | "sizeMore"
    | "ext"
    | "sizeLf"
    | "data"
    | "dataCr"
    | "dataLf"
    | "trailer"
    | "trailerLine"
    | "trailerLf"
    | "endLf"
    | "done" = "size";
  #size = 0;
  #digits = 0;
  #lineBytes = 0;
  #trailerBytes = 0;
  #error: string | null = null;

  constructor(private readonly maxTrailerBytes: number) {}

  get done(): boolean {
    return this.#state === "done";
  }

  /** Why the body is malformed, once it is. */
  get error(): string | null {
    return this.#error;
  }

  push(bytes: Uint8Array, from: number): number {
    let i = from;
    const fail = (message: string): number => {
      this.#error = message;
      return i - from;
    };
    while (i < bytes.length && this.#state !== "done") {
      if (this.#state === "data") {
        const take = Math.min(this.#size, bytes.length - i);
        this.#size -= take;
        i += take;
        if (this.#size === 0) this.#state = "dataCr";
        continue;
      }
      const b = bytes[i]!;
      switch (this.#state) {
        case "size":
        case "sizeMore": {
          const digit = hexValue(b);
          if (digit >= 0) {
            if (++this.#digits > MAX_CHUNK_SIZE_DIGITS) return fail("A chunk size is too large");
            this.#size = this.#size * 16 + digit;
            this.#state = "sizeMore";
          } else if (this.#state === "size") {
            return fail("A chunk size is not hexadecimal");
          } else if (b === CR) {
            this.#state = "sizeLf";
          } else if (b === SEMICOLON || b === SP || b === HTAB) {
            this.#state = "ext";
          } else {
            return fail("A chunk size is not hexadecimal");
          }
          break;
        }
        case "ext":
          if (b === CR) this.#state = "sizeLf";
          else if (!isValueByte(b)) return fail("A chunk extension holds a control character");
          break;
        case "sizeLf":
          if (b !== LF) return fail("A chunk-size line must end with CRLF");
          this.#state = this.#size === 0 ? "trailer" : "data";
          this.#digits = 0;
          this.#lineBytes = 0;
          break;
        case "dataCr":
          if (b !== CR) return fail("A chunk is longer than its size says");
          this.#state = "dataLf";
          break;
        case "dataLf":
          if (b !== LF) return fail("A chunk must end with CRLF");
          this.#state = "size";
          break;
        case "trailer":
          if (b === CR) this.#state = "endLf";
          else if (!isValueByte(b) || b === SP || b === HTAB) {
            return fail("A trailer field is malformed");
          } else this.#state = "trailerLine";
          break;
        case "trailerLine":
          if (b === CR) this.#state = "trailerLf";
          else if (!isValueByte(b)) return fail("A trailer field holds a control character");
          break;
        case "trailerLf":
          if (b !== LF) return fail("A trailer field must end with CRLF");
          this.#state = "trailer";
          break;
        case "endLf":
          if (b !== LF) return fail("A chunked body must end with CRLF");
          this.#state = "done";
          break;
      }
      i++;
      if (this.#state === "size" || this.#state === "sizeMore" || this.#state === "ext") {
        if (++this.#lineBytes > MAX_CHUNK_LINE_BYTES) return fail("A chunk-size line is too long");
      } else if (this.#state.startsWith("trailer") || this.#state === "endLf") {
        if (++this.#trailerBytes > this.maxTrailerBytes) return fail("The trailer is too large");
      }
    }
    return i - from;
  }
}

/** The decimal number in bytes[from, to), spaces around it ignored; -1 if there is none. */
function digitsOf(bytes: Uint8Array, from: number, to: number): number {
  let value = -1;
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if (b >= 48 && b <= 57) value = (value === -1 ? 0 : value * 10) + b - 48;
    else if (b !== SP && b !== HTAB) return -1;
  }
  return value;
}

function hexValue(b: number): number {
  if (b >= 48 && b <= 57) return b - 48;
  const lower = b | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/**
 * Splits a client's byte stream into requests. Heads are held back until complete and checked
 * (so the app never sees a partial or refused one); bodies pass through as they arrive.
 */
export class RequestFramer {
  #phase: RequestPhase = "idle";
  #serial = 0;
  /** Bytes of a head held until it is complete; none until one arrives in pieces. */
  #head: Uint8Array = NO_BYTES;
  #headLength = 0;
  /** Where the scan for the head's end resumes, and what it found so far. */
  #scanned = 0;
  #firstLineEnd = -1;
  #line: RequestLine | null = null;
  #lines = 0;
  #remaining = 0;
  #chunked: ChunkedBody | null = null;
  #stopped = false;

  constructor(private readonly limits: HeadLimits) {}

  get phase(): RequestPhase {
    return this.#phase;
  }

  /** Changes whenever the phase does, even to the same name (one request's head, the next's). */
  get serial(): number {
    return this.#serial;
  }

  /** Frames `chunk` up to the end of the first request that ends in it. */
  push(chunk: Uint8Array): RequestStep {
    const events: RequestEvent[] = [];
    let i = 0;
    let ended = false;
    while (i < chunk.length && !this.#stopped && !ended) {
      if (this.#phase === "idle") {
        // Blank lines before a request line are allowed (RFC 9112 §2.2) and carry nothing.
        while (i < chunk.length && (chunk[i] === CR || chunk[i] === LF)) i++;
        if (i === chunk.length) break;
        this.#enter("head");
      }
      if (this.#phase === "head") {
        i = this.#pushHead(chunk, i, events);
      } else if (this.#phase === "body") {
        i = this.#pushBody(chunk, i, events);
      }
      ended = events.at(-1)?.type === "end";
    }
    return { events, consumed: this.#stopped ? chunk.length : i, ended };
  }

  #enter(phase: RequestPhase): void {
    this.#phase = phase;
    this.#serial++;
  }

  #refuse(events: RequestEvent[], refused: Refusal, during: "head" | "body"): void {
    this.#stopped = true;
    events.push({ type: "refuse", refusal: refused, during });
  }

  #pushHead(chunk: Uint8Array, from: number, events: RequestEvent[]): number {
    // Usually a whole head arrives in one chunk: check it in place, without copying.
    const source = this.#headLength === 0 ? chunk : this.#append(chunk, from);
    const offset = this.#headLength === 0 ? from : 0;
    const scan = this.#scan(source, offset);
    if (typeof scan === "object") {
      this.#refuse(events, scan, "head");
      return chunk.length;
    }
    if (scan === -1) {
      if (this.#headLength === 0) this.#append(chunk, from);
      return chunk.length;
    }
    const headBytes = source.subarray(offset, scan);
    const parsed = parseRequestHead(headBytes, this.limits, this.#line ?? undefined);
    if ("code" in parsed) {
      this.#refuse(events, parsed, "head");
      return chunk.length;
    }
    events.push({ type: "head", head: parsed }, { type: "data", bytes: headBytes });
    // What of this chunk is past the head: the buffered part came from earlier chunks.
    const consumed = this.#headLength === 0 ? scan : chunk.length - (source.length - scan);
    this.#headLength = 0;
    this.#scanned = 0;
    this.#firstLineEnd = -1;
    this.#line = null;
    this.#lines = 0;
    const body = parsed.body;
    if (body.kind === "none") {
      events.push({ type: "end" });
      this.#enter("idle");
    } else {
      this.#remaining = body.kind === "length" ? body.length : 0;
      this.#chunked = body.kind === "chunked" ? new ChunkedBody(this.limits.maxHeaderBytes) : null;
      this.#enter("body");
    }
    return consumed;
  }

  /** Appends chunk[from..] to the held head bytes and answers them. */
  #append(chunk: Uint8Array, from: number): Uint8Array {
    const needed = this.#headLength + chunk.length - from;
    // A new head gets a new buffer: the last one may still be on its way to the app. Never more
    // than one chunk past the limit: the scan refuses a head that long.
    if (this.#headLength === 0) {
      this.#head = new Uint8Array(Math.max(needed, 1024));
    } else if (needed > this.#head.length) {
      const grown = new Uint8Array(Math.max(needed, this.#head.length * 2));
      grown.set(this.#head.subarray(0, this.#headLength));
      this.#head = grown;
    }
    this.#head.set(chunk.subarray(from), this.#headLength);
    this.#headLength = needed;
    return this.#head.subarray(0, this.#headLength);
  }

  /**
   * Looks for the end of the head in source[offset..], resuming where the last scan stopped;
   * answers the index just past CRLF CRLF, -1 when more is needed, or why to refuse now.
   */
  #scan(source: Uint8Array, offset: number): number | Refusal {
    const limits = this.limits;
    let at = offset + this.#scanned;
    for (;;) {
      const lf = source.indexOf(LF, at);
      if (lf === -1) break;
      if (lf === offset || source[lf - 1] !== CR) {
        return refusal("bad_request", "Lines of a request head must end with CRLF");
      }
      this.#lines++;
      if (this.#firstLineEnd === -1) {
        this.#firstLineEnd = lf - offset;
        // The request line is judged as soon as it is whole, not when the head is.
        const line = parseRequestLine(source.subarray(offset, lf + 1), lf - 1 - offset, limits);
        if ("code" in line) return line;
        this.#line = line;
      } else if (lf - offset >= 3 && source[lf - 2] === LF) {
        return lf + 1;
      }
      if (this.#lines > MAX_HEADER_COUNT + 1) return headTooLarge(limits);
      at = lf + 1;
    }
    const length = source.length - offset;
    this.#scanned = length;
    if (this.#firstLineEnd === -1) {
      // Still in the request line: is it the URL that is too long?
      // What follows the first space is the target, and perhaps the start of " HTTP/1.1\r".
      const sp = source.indexOf(SP, offset);
      if (sp !== -1 && source.length - sp - 1 > limits.maxUrlBytes + VERSION_BYTES) {
        return uriTooLong(limits);
      }
      if (length > limits.maxHeaderBytes) {
        return sp === -1
          ? refusal("bad_request", "Malformed request line: no method")
          : uriTooLong(limits);
      }
    } else if (length > limits.maxHeaderBytes) {
      return headTooLarge(limits);
    }
    return -1;
  }

  #pushBody(chunk: Uint8Array, from: number, events: RequestEvent[]): number {
    let taken: number;
    let ended: boolean;
    if (this.#chunked) {
      taken = this.#chunked.push(chunk, from);
      const error = this.#chunked.error;
      if (taken > 0) events.push({ type: "data", bytes: chunk.subarray(from, from + taken) });
      if (error) {
        this.#refuse(events, refusal("bad_request", `Malformed chunked body: ${error}`), "body");
        return chunk.length;
      }
      ended = this.#chunked.done;
    } else {
      taken = Math.min(this.#remaining, chunk.length - from);
      this.#remaining -= taken;
      events.push({ type: "data", bytes: chunk.subarray(from, from + taken) });
      ended = this.#remaining === 0;
    }
    if (ended) {
      this.#chunked = null;
      events.push({ type: "end" });
      this.#enter("idle");
    }
    return from + taken;
  }
}

/** What a chunk of the app's bytes completed. */
export interface ResponseProgress {
  /** Final (non-1xx) responses that ended in this chunk. */
  completed: number;
  /** The app switched protocols (101), which the edge does not follow. */
  upgraded: boolean;
  /**
   * Whether the connection outlives the last response completed (RFC 9112 §9.3): an HTTP/1.1
   * answer unless it says `close`, an HTTP/1.0 one only if it says `keep-alive`, never one whose
   * body runs until the close.
   */
  persistent: boolean;
}

/**
 * Follows the app's responses, in request order, to count the ones that finished. The app is
 * Deno's own server, so its framing is trusted; this only needs to know which request each
 * answers (`expect`), because a response to HEAD has no body whatever its headers say.
 */
export class ResponseFramer {
  #heads: boolean[] = [];
  #state: "head" | "length" | "chunked" | "untilClose" = "head";
  #head = new Uint8Array(1024);
  #headLength = 0;
  #remaining = 0;
  #chunked: ChunkedBody | null = null;
  #persistent = true;

  /** A request was forwarded: its response comes after those already expected. */
  expect(isHead: boolean): void {
    this.#heads.push(isHead);
  }

  /** Whether some bytes of the next final response have been seen (so the client has them). */
  get midResponse(): boolean {
    return this.#state !== "head" || this.#headLength > 0;
  }

  push(chunk: Uint8Array): ResponseProgress {
    const progress: ResponseProgress = { completed: 0, upgraded: false, persistent: true };
    let i = 0;
    while (i < chunk.length && !progress.upgraded) {
      switch (this.#state) {
        case "head":
          i = this.#pushHead(chunk, i, progress);
          break;
        case "length": {
          const take = Math.min(this.#remaining, chunk.length - i);
          this.#remaining -= take;
          i += take;
          if (this.#remaining === 0) this.#finish(progress);
          break;
        }
        case "chunked":
          i += this.#chunked!.push(chunk, i);
          if (this.#chunked!.done) this.#finish(progress);
          else if (this.#chunked!.error) throw new Error(`app sent ${this.#chunked!.error}`);
          break;
        case "untilClose":
          i = chunk.length;
          break;
      }
    }
    return progress;
  }

  /** The app closed the connection; a body that runs until the close is complete. */
  end(): number {
    if (this.#state !== "untilClose") return 0;
    this.#state = "head";
    this.#heads.shift();
    return 1;
  }

  #finish(progress: ResponseProgress): void {
    this.#state = "head";
    this.#chunked = null;
    this.#heads.shift();
    progress.completed++;
    progress.persistent = this.#persistent;
  }

  #pushHead(chunk: Uint8Array, from: number, progress: ResponseProgress): number {
    let end = -1;
    let at = from;
    // Find CRLF CRLF, which may straddle what is held from the last chunk.
    for (;;) {
      const lf = chunk.indexOf(LF, at);
      if (lf === -1) break;
      if (this.#byteBefore(chunk, from, lf, 2) === LF) {
        end = lf + 1;
        break;
      }
      at = lf + 1;
    }
    if (end !== -1 && this.#headLength === 0) {
      // The whole head is in this chunk (the usual case): read it where it is.
      this.#begin(chunk.subarray(from, end), progress);
      return end;
    }
    const taken = (end === -1 ? chunk.length : end) - from;
    if (this.#headLength + taken > this.#head.length) {
      const grown = new Uint8Array(Math.max(this.#head.length * 2, this.#headLength + taken));
      grown.set(this.#head.subarray(0, this.#headLength));
      this.#head = grown;
    }
    this.#head.set(chunk.subarray(from, from + taken), this.#headLength);
    this.#headLength += taken;
    if (end === -1) return chunk.length;
    const head = this.#head.subarray(0, this.#headLength);
    this.#headLength = 0;
    this.#begin(head, progress);
    return end;
  }

  /** The byte `back` places before chunk[index], looking into the held head when needed. */
  #byteBefore(chunk: Uint8Array, from: number, index: number, back: number): number | undefined {
    const at = index - back;
    if (at >= from) return chunk[at];
    return this.#head[this.#headLength + (at - from)];
  }

  #begin(head: Uint8Array, progress: ResponseProgress): void {
    // "HTTP/1.1 200 ": the status is always bytes 9 to 11.
    const status = digitsOf(head, 9, 12);
    if (status === 101) {
      progress.upgraded = true;
      return;
    }
    // An interim answer (100 Continue) is followed by the real one to the same request.
    if (status < 200) return;
    let length = -1;
    let chunked = false;
    let connection = "";
    let start = head.indexOf(LF) + 1;
    while (start < head.length - 2) {
      const end = head.indexOf(LF, start);
      const colon = head.indexOf(COLON, start);
      if (colon !== -1 && colon < end) {
        if (isName(head, start, colon, "content-length")) {
          length = digitsOf(head, colon + 1, end - 1);
        } else if (isName(head, start, colon, "transfer-encoding")) {
          chunked = /(^|,)\s*chunked\s*$/i.test(ascii(head, colon + 1, end - 1));
        } else if (isName(head, start, colon, "connection")) {
          connection += `,${ascii(head, colon + 1, end - 1).toLowerCase()}`;
        }
      }
      start = end + 1;
    }
    const options = new Set(connection.split(",").map((option) => option.trim()));
    // "HTTP/1.0 200 ": the minor version is byte 7.
    this.#persistent = head[7] === 0x30 ? options.has("keep-alive") : !options.has("close");
    const isHead = this.#heads[0] ?? false;
    if (isHead || status === 204 || status === 304) {
      this.#finish(progress);
      return;
    }
    if (chunked) {
      this.#state = "chunked";
      this.#chunked = new ChunkedBody(Number.MAX_SAFE_INTEGER);
    } else if (length > 0) {
      this.#state = "length";
      this.#remaining = length;
    } else if (length === 0) {
      this.#finish(progress);
    } else {
      this.#state = "untilClose";
      this.#persistent = false;
    }
  }
}
