/**
 * Every answer the service can give, as the status and the exact envelope message that travel
 * together, each message to the letter (docs/contract.md, "Messages").
 * Each message has exactly one status, so a pair that does not belong together cannot be written.
 */
export const ANSWERS = {
  tokenGenerated: { status: 200, message: 'Token generated successfully' },
  bookCreated: { status: 201, message: 'Book created successfully' },
  booksRetrieved: { status: 200, message: 'Books retrieved successfully' },
  bookRetrieved: { status: 200, message: 'Book retrieved successfully' },
  bookUpdated: { status: 200, message: 'Book updated successfully' },
  bookDeleted: { status: 200, message: 'Book deleted successfully' },
  ok: { status: 200, message: 'OK' },
  invalidRequestPayload: { status: 400, message: 'Invalid request payload' },
  invalidInput: { status: 400, message: 'Invalid input' },
  invalidBookId: { status: 400, message: 'Invalid book id' },
  invalidQuery: { status: 400, message: 'Invalid query' },
  invalidCredentials: { status: 401, message: 'Invalid credentials' },
  tokenRequired: { status: 401, message: 'Authorization token required' },
  invalidToken: { status: 401, message: 'Invalid token' },
  bookNotFound: { status: 404, message: 'Book not found' },
  notFound: { status: 404, message: 'Not found' },
  methodNotAllowed: { status: 405, message: 'Method not allowed' },
  payloadTooLarge: { status: 413, message: 'Payload too large' },
  tooManyLoginAttempts: { status: 429, message: 'Too many login attempts' },
  badRequest: { status: 400, message: 'Bad request' },
  misdirectedRequest: { status: 421, message: 'Misdirected request' },
  requestTimeout: { status: 408, message: 'Request timeout' },
  headersTooLarge: { status: 431, message: 'Request header fields too large' },
  couldNotGenerateToken: { status: 500, message: 'Could not generate token' },
  preconditionFailed: { status: 412, message: 'Precondition failed' },
  changesRetrieved: { status: 200, message: 'Changes retrieved successfully' },
  changesUnavailable: { status: 410, message: 'Changes no longer available' },
  tooManyEventStreams: { status: 503, message: 'Too many event streams' },
  shuttingDown: { status: 503, message: 'Shutting down' },
  notReady: { status: 503, message: 'Not ready' },
  bookIdsExhausted: { status: 507, message: 'Book ids exhausted' },
  internalError: { status: 500, message: 'Internal server error' },
} as const;

export type AnswerName = keyof typeof ANSWERS;
/** One of the status and message pairs in ANSWERS. */
export type Answer = (typeof ANSWERS)[AnswerName];
/** One of the exact envelope messages. */
export type Message = Answer['message'];
/** The one status `M` is sent with. */
export type StatusOf<M extends Message> = Extract<Answer, { message: M }>['status'];
/** The messages sent with status `S`. */
export type MessageOf<S extends number> = Extract<Answer, { status: S }>['message'];

/** The messages alone, by name (the library's MESSAGES). */
export const MESSAGES = Object.fromEntries(Object.entries(ANSWERS).map(([name, answer]) => [name, answer.message])) as {
  readonly [K in AnswerName]: (typeof ANSWERS)[K]['message'];
};

/**
 * An answer that is not a success: the status and the exact envelope message, plus headers.
 * `new HttpError(404, MESSAGES.invalidInput)` does not compile: the status is the message's own.
 */
export class HttpError<M extends Message = Message> extends Error {
  readonly status: StatusOf<M>;
  override readonly message: M;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(status: StatusOf<M>, message: M, headers?: Readonly<Record<string, string>>) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.message = message;
    this.headers = headers;
  }
}

/** The named answer as an HttpError to throw: `throw refusal('bookNotFound')`. */
export function refusal(name: AnswerName, headers?: Readonly<Record<string, string>>): HttpError {
  const { status, message } = ANSWERS[name];
  return new HttpError<Message>(status, message, headers);
}
