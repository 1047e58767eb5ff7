import { request, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** An answer's bytes as they came over the wire: nothing decoded (fetch would gunzip them out of sight). */
export interface EncodedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request on a connection of its own, its answer read whole without decoding it. */
export function encodedGet(port: number, path: string, headers: Record<string, string>, method = 'GET'): Promise<EncodedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The body as its Content-Encoding has it: gunzipped when gzip, as it is otherwise. */
export function decoded(answer: EncodedAnswer): Buffer {
  return answer.headers['content-encoding'] === 'gzip' ? gunzipSync(answer.body) : answer.body;
}
