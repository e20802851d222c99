import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';

/** A TCP proxy in front of "the Redis master": switched to another server like a failover. */
export class SwitchableProxy {
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    private target: number,
  ) {}

  static async start(target: number): Promise<SwitchableProxy> {
    const server = createServer();
    const proxy = new SwitchableProxy(server, target);
    server.on('connection', (client: Socket) => proxy.accept(client));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private accept(client: Socket): void {
    const upstream = connect(this.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Every open connection is cut; new ones go to `target`. */
  switchTo(target: number): void {
    this.target = target;
    for (const s of [...this.sockets]) s.destroy();
  }

  async stop(): Promise<void> {
    for (const s of [...this.sockets]) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
