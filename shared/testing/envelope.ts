/** A response body as a test reads it: the success envelope, or the error envelope. */
export interface Envelope<T = unknown> {
  status: boolean;
  message: string;
  data: T;
  error?: string;
  details?: { path: string; message: string }[];
}

/** The body of a response, read as an envelope. */
export async function envelopeOf<T = unknown>(response: Response): Promise<Envelope<T>> {
  return await response.json() as Envelope<T>;
}
