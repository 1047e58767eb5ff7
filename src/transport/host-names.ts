import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { ConfigError } from '../faults.ts';

/**
 * The host names a service that listens on loopback only accepts by default (docs/contract.md,
 * "Host names"): `localhost` and every name under it (RFC 6761 §6.3 reserves them for loopback, and
 * browsers resolve them there without asking DNS), and the loopback literals as browsers write them.
 * A page that rebinds its own name to 127.0.0.1 still sends that name, which is none of these.
 */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['localhost', '.localhost', '127.0.0.1', '[::1]'];

const LOOPBACK_ADDRESSES = new BlockList();
LOOPBACK_ADDRESSES.addSubnet('127.0.0.0', 8, 'ipv4');
// BlockList also matches the IPv4-mapped spellings (::ffff:127.0.0.1) against the IPv4 subnet.
LOOPBACK_ADDRESSES.addAddress('::1', 'ipv6');

/** Whether a listening address (HOST) reaches the host's own loopback interface only. */
function isLoopbackAddress(address: string): boolean {
  const family = isIP(address);
  if (family !== 0) return LOOPBACK_ADDRESSES.check(address, family === 4 ? 'ipv4' : 'ipv6');
  const name = address.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The names accepted when nothing is configured: the loopback names (plus the listening address
 * itself, when it is another loopback literal such as 127.0.0.2) for a loopback-only service;
 * undefined, any name, for one listening on all interfaces or on another address, which clients
 * may reach by an address or by any of its names.
 */
export function defaultAllowedHosts(listenAddress: string | undefined): string[] | undefined {
  if (listenAddress === undefined || !isLoopbackAddress(listenAddress)) return undefined;
  const hosts = [...LOOPBACK_HOST_NAMES];
  if (isIP(listenAddress) !== 0) {
    const own = normalEntry(listenAddress, 'HOST');
    if (!hosts.includes(own)) hosts.push(own);
  }
  return hosts;
}

/**
 * One entry of ALLOWED_HOSTS (or `allowedHosts`) as the matcher compares it: lower case, without a
 * trailing dot, an IPv6 literal in brackets and in the form browsers send (RFC 5952). Throws
 * ConfigError, naming the entry, for anything that is not `*`, a name, `.name` or an address.
 */
function normalEntry(entry: string, setting: string): string {
  const fail = (expected: string): never => {
    throw new ConfigError(`invalid ${setting} entry ${JSON.stringify(entry)}: ${expected}`);
  };
  if (entry === '*') return entry;
  const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  if (isIP(bare) === 6) {
    try {
      return new URL(`http://[${bare}]/`).hostname;
    } catch {
      return fail('expected an IPv6 address without a zone');
    }
  }
  if (entry.startsWith('*.')) fail(`write .${entry.slice(2)} for a domain and all its subdomains`);
  if (/[^\x00-\x7f]/.test(entry)) fail('expected an ASCII name (write an internationalised name in its xn-- form)');
  if (entry.includes(':')) fail('expected a name without a port (any port is accepted)');
  const name = entry.toLowerCase().replace(/\.$/, '');
  if (!/^\.?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/.test(name)) fail('expected *, a host name such as books.example.com, .example.com for a domain and its subdomains, or an IP address');
  return name;
}

/**
 * ALLOWED_HOSTS: comma-separated entries, each `*` (any name), a name (`books.example.com`), a
 * domain and all its subdomains (`.example.com`, as Django's ALLOWED_HOSTS and Vite's
 * `server.allowedHosts` write it), or an address (`192.0.2.7`, `[2001:db8::7]`).
 */
export function parseAllowedHosts(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new ConfigError('ALLOWED_HOSTS lists no host name: leave it unset for the default, or write * for any');
  for (const entry of entries) normalEntry(entry, 'ALLOWED_HOSTS');
  return entries;
}

/** Whether a request names a host the service answers for; undefined when any host is. */
export type HostCheck = (req: IncomingMessage) => boolean;

/**
 * The check for `entries` (the form parseAllowedHosts takes), built once: undefined when any name
 * is accepted (no entries given, or `*`), so such a service pays nothing per request. Per request:
 * a comparison with the last Host value accepted (clients name the service the same way request
 * after request; the answer depends on that value alone), else one Set lookup, then one
 * `endsWith` per `.domain` entry.
 */
export function createHostCheck(entries: readonly string[] | undefined): HostCheck | undefined {
  if (entries === undefined) return undefined;
  if (entries.length === 0) throw new ConfigError('allowedHosts lists no host name: leave it out to accept any, or write * for any');
  const names = entries.map((entry) => normalEntry(entry, 'allowedHosts'));
  if (names.includes('*')) return undefined;
  const exact = new Set<string>();
  const domains: string[] = [];
  for (const name of names) {
    if (name.startsWith('.')) {
      exact.add(name.slice(1));
      domains.push(name);
    } else exact.add(name);
  }
  const accepts = (name: string): boolean => {
    if (exact.has(name)) return true;
    for (const domain of domains) if (name.endsWith(domain)) return true;
    return false;
  };
  let lastAccepted: string | undefined;
  return (req) => {
    const host = targetHost(req);
    // An HTTP/1.0 request may leave Host out (an HTTP/1.1 one without it is refused before this):
    // no name to check, and no browser sends such a request.
    if (host === undefined || host === lastAccepted) return true;
    const name = hostName(host);
    if (name === undefined || !accepts(name)) return false;
    lastAccepted = host;
    return true;
  };
}

/** RFC 9112 §3.2.2: an absolute-form target names the host, and Host is then ignored. */
function targetHost(req: IncomingMessage): string | undefined {
  const url = req.url as string;
  if (url.charCodeAt(0) !== 47 /* / */) {
    const scheme = url.indexOf('://');
    if (scheme !== -1) {
      let end = scheme + 3;
      while (end < url.length && url[end] !== '/' && url[end] !== '?' && url[end] !== '#') end++;
      return url.slice(scheme + 3, end);
    }
  }
  return req.headers.host;
}

/**
 * `host[:port]` (RFC 9110 §7.2) as the name to match: lower case, without the port and without one
 * trailing dot (`localhost.` is `localhost`, its fully qualified form); undefined when what follows
 * the name is not a port.
 */
function hostName(host: string): string | undefined {
  const bracketed = host.charCodeAt(0) === 91; /* [ */
  let end = bracketed ? host.indexOf(']') + 1 : host.indexOf(':');
  if (end === 0) return undefined;
  if (end === -1) end = host.length;
  else if (end < host.length) {
    if (host.charCodeAt(end) !== 58 /* : */ || !isPort(host, end + 1)) return undefined;
  }
  if (host.charCodeAt(end - 1) === 46 /* . */) end--;
  for (let i = bracketed ? 1 : 0; i < (bracketed ? end - 1 : end); i++) {
    if (!(bracketed ? isAddressChar(host.charCodeAt(i)) : isNameChar(host.charCodeAt(i)))) return undefined;
  }
  return host.slice(0, end).toLowerCase();
}

/** Decimal digits from `from` to the end naming a port, 0..65535 (RFC 3986 §3.2.3); empty is allowed. */
function isPort(host: string, from: number): boolean {
  if (host.length - from > 5) return false;
  for (let i = from; i < host.length; i++) {
    const c = host.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return host.length === from || Number(host.slice(from)) <= 65535;
}

/** A letter, digit, `-`, `.` or `_`: what a DNS name or an IPv4 address is made of (`#`, `@`, `%` never are). */
function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95;
}

/** Inside `[…]`: hex digits, `:` and `.` (an IPv6 address, RFC 3986 §3.2.2). */
function isAddressChar(c: number): boolean {
  return (c >= 48 && c <= 58) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70) || c === 46;
}
