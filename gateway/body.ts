import { ApiError, parseJsonText } from "@printshop/shared/http";
import { concatBytes } from "@printshop/shared/bytes";

/**
 * Reads a request body up to `maxBytes`, refusing as soon as the limit is crossed: a declared
 * Content-Length over the limit is refused before reading, and a streamed body is cut off at the
 * first chunk past it, so an endless body is never buffered.
 */
export async function readLimitedBody(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!request.body) return null;
  const tooLarge = (): ApiError =>
    new ApiError("payload_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) {
    await request.body.cancel().catch(() => {});
    throw tooLarge();
  }
  const reader = request.body.getReader();
  const pieces = new BodyPieces();
  while (true) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The connection went before the body was whole (the edge cut off a slow body, or the
      // client left): nobody is waiting for this answer, and it is no server fault to log.
      throw new ApiError("invalid_json", "The request body ended before it was complete");
    }
    const { done, value } = chunk;
    if (done) break;
    if (pieces.length + value.byteLength > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    pieces.add(value);
  }
  return pieces.bytes();
}

/**
 * The pieces of a body as they arrive, holding no more memory than twice their bytes. Deno hands
 * each piece over as a view of a 64 KiB buffer, however few bytes it carries: kept as they came,
 * a body trickled in a byte at a time (a slow-body attack) would hold 64 KiB per byte.
 */
export class BodyPieces {
  readonly #pieces: Uint8Array[] = [];
  #length = 0;
  #held = 0;

  /** Bytes received. */
  get length(): number {
    return this.#length;
  }

  /** Bytes of memory the pieces keep alive. */
  get held(): number {
    return this.#held;
  }

  add(piece: Uint8Array): void {
    const kept = piece.buffer.byteLength > 2 * piece.byteLength ? piece.slice() : piece;
    this.#pieces.push(kept);
    this.#length += piece.byteLength;
    this.#held += kept.buffer.byteLength;
  }

  bytes(): Uint8Array<ArrayBuffer> {
    return concatBytes(this.#pieces);
  }
}

/**
 * Bodies are taken as sent, never decompressed: a gzip/deflate/br body is 415 rather than a
 * puzzling `invalid_json`, and no small request can inflate into a large one (a decompression
 * bomb) past the body limit. `identity` (the same as no encoding) is fine.
 */
export function assertIdentityEncoding(headers: Headers): void {
  const encoding = headers.get("content-encoding")?.trim().toLowerCase();
  if (encoding === undefined || encoding === "" || encoding === "identity") return;
  throw new ApiError(
    "unsupported_media_type",
    `Request bodies are accepted uncompressed only; drop Content-Encoding "${encoding}" and ` +
      "send the JSON as it is",
  );
}

/** Refuses a body that is not JSON before it reaches a service. */
export function assertJson(body: Uint8Array): void {
  const text = new TextDecoder().decode(body);
  if (text.trim() === "") return;
  parseJsonText(text);
}
