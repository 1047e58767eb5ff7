import { connect } from 'node:net';
import { Arrivals, streamScanner, type FollowerReport } from './fanout-scan.ts';

/*
 * bench:fanout's subscriber child, forked by fanout.ts: its first message is a SubscriberConfig;
 * then on 'open' it opens the streams (answering 'open'), on 'close' closes them and answers with
 * the CPU it used while they were open, and on 'report' sends what every stream received
 * (FollowerReport) and exits. A process of its own, so scanning the streams does not take the load
 * generator's CPU.
 */

/** The service to follow and how many streams to hold on it. */
export interface SubscriberConfig {
  port: number;
  token: string;
  streams: number;
}

/** Shared by every stream of the child: a read is scanned before the next one can start. */
const READ_BUFFER = Buffer.allocUnsafe(1 << 20);

/**
 * A stream following the feed, its created frames recorded in `arrivals`. A raw socket, not
 * node:http's client: what the child costs per read is what it takes from the service's CPU, and
 * the scan needs no HTTP decoding (the head holds no frame, and a chunk-size line only ever stands
 * between whole frames, since each chunk is one of the service's writes of whole frames). Reads go
 * into one reused buffer (`onread`, as in load.ts): no Buffer allocated per read.
 */
function follow(port: number, token: string, arrivals: Arrivals): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const scan = streamScanner(arrivals);
    let head = true;
    const onread = {
      buffer: READ_BUFFER,
      callback: (n: number): boolean => {
        const chunk = READ_BUFFER.subarray(0, n);
        if (head) {
          head = false;
          const status = chunk.subarray(0, 12).toString('latin1');
          if (status !== 'HTTP/1.1 200') {
            reject(new Error(`GET /events: ${status}`));
            socket.destroy();
            return false;
          }
          resolve(() => socket.destroy());
        }
        scan(chunk);
        return true;
      },
    };
    const socket = connect({ port, host: '127.0.0.1', onread }, () => socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\n\r\n`));
    socket.on('error', reject);
  });
}

const arrivals = new Arrivals();
let config: SubscriberConfig | undefined;
let open: (() => void)[] = [];
let cpuAtOpen = process.cpuUsage();
process.on('message', (message: SubscriberConfig | 'open' | 'close' | 'report') => {
  void (async () => {
    if (typeof message === 'object') {
      config = message;
    } else if (message === 'open') {
      const { port, token, streams } = config as SubscriberConfig;
      open = await Promise.all(Array.from({ length: streams }, () => follow(port, token, arrivals)));
      cpuAtOpen = process.cpuUsage();
      process.send?.('open');
    } else if (message === 'close') {
      const cpu = process.cpuUsage(cpuAtOpen);
      for (const close of open) close();
      process.send?.(cpu.user + cpu.system);
    } else {
      const report: FollowerReport = { frames: arrivals.frames, breaks: arrivals.breaks, latest: arrivals.entries() };
      process.send?.(report, () => process.exit(0));
    }
  })();
});
