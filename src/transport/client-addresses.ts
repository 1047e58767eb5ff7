/** What one client address holds open now, across its connections. */
export interface AddressLoad {
  readonly address: string;
  connections: number;
  /** Requests received whose answers have not finished, across its connections. */
  inFlight: number;
}

/**
 * The load of every client address with a connection open (SECURITY.md, "Limits": per-address
 * limits). An address is forgotten with its last connection, so the map holds only addresses
 * that hold something. Each connection keeps its address's load, so counting a request is an
 * increment, not a look-up.
 */
export class ClientAddresses {
  readonly #loads = new Map<string, AddressLoad>();

  /** One more connection from `address`: its load, or undefined when it has `max` open already (0: no limit). */
  connect(address: string, max: number): AddressLoad | undefined {
    let load = this.#loads.get(address);
    if (load === undefined) {
      load = { address, connections: 0, inFlight: 0 };
      this.#loads.set(address, load);
    } else if (max > 0 && load.connections >= max) {
      return undefined;
    }
    load.connections++;
    return load;
  }

  disconnect(load: AddressLoad): void {
    if (--load.connections === 0) this.#loads.delete(load.address);
  }
}
