import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '@app/config';
import type { CallerAccess } from '@app/identity';
import { RegistryService } from '@app/registry';
import { changedListsFor } from './caller-changes';
import { changedLists, type ListKind } from './catalog-changes';

/** One open notification stream, whatever its era. */
export interface OpenStream {
  /**
   * What the stream's caller may use (`mcp.access`): it is told of a list change only when its
   * own view of the list changed. Undefined: everything (no `mcp.access`, or auth off).
   */
  readonly access?: CallerAccess;
  /** A list of the published catalog changed (as this stream's caller sees it). */
  listChanged(kind: ListKind): void;
  /** A keep-alive tick: write a comment line. */
  keepAlive(): void;
  /**
   * Ends the stream and releases what it holds (upstream listens). `graceful`: the gateway
   * ends it (shutdown), so a 2026 listen gets its closing result first (wire notes §2.8).
   */
  close(graceful: boolean): void;
}

/**
 * The notification streams open on this replica (issue 11 §6): 2026 `subscriptions/listen`
 * streams and 2025 session GET streams. It tells each of them when the published catalog
 * changes (RegistryService.onPublished; every replica refreshes from the same sources and
 * publishes the same bytes, so each notices a change itself), writes the keep-alive comment
 * on all of them every `mcp.listen.keepAliveMillis`, caps them at `mcp.listen.maxStreams`, and
 * ends them all when the /mcp listener starts draining.
 */
@Injectable()
export class NotificationHub implements OnApplicationShutdown {
  private readonly logger = new Logger('Mcp');
  private readonly streams = new Set<OpenStream>();
  private readonly maxStreams: number;
  private readonly keepAliveMillis: number;
  private keepAliveTimer?: NodeJS.Timeout;
  private draining = false;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig, registry: RegistryService) {
    this.maxStreams = config.mcp.listen.maxStreams;
    this.keepAliveMillis = config.mcp.listen.keepAliveMillis;
    registry.onPublished((previous, next) => {
      const kinds = changedLists(previous, next);
      if (kinds.length === 0 || this.streams.size === 0) return;
      this.logger.log(
        `Catalog lists changed (${kinds.join(', ')}): notifying ${this.streams.size} stream(s)`,
      );
      for (const stream of [...this.streams])
        for (const kind of changedListsFor(kinds, previous, next, stream.access))
          stream.listChanged(kind);
    });
  }

  /** Open streams on this replica. */
  get size(): number {
    return this.streams.size;
  }

  /** true when another stream may open (below the cap, not draining). */
  get hasRoom(): boolean {
    return !this.draining && this.streams.size < this.maxStreams;
  }

  /** Registers an open stream; false (nothing registered) when there is no room. */
  add(stream: OpenStream): boolean {
    if (!this.hasRoom) return false;
    this.streams.add(stream);
    if (this.keepAliveTimer === undefined) {
      this.keepAliveTimer = setInterval(() => {
        for (const s of this.streams) s.keepAlive();
      }, this.keepAliveMillis);
      this.keepAliveTimer.unref();
    }
    return true;
  }

  /** Forgets a stream (it closed). */
  remove(stream: OpenStream): void {
    this.streams.delete(stream);
    if (this.streams.size === 0 && this.keepAliveTimer !== undefined) {
      clearInterval(this.keepAliveTimer);
      this.keepAliveTimer = undefined;
    }
  }

  /**
   * The /mcp listener is draining (SIGTERM): every stream is ended gracefully now, not at the
   * end of the grace period, and no new one opens. Clients reconnect to another replica.
   */
  closeAll(): void {
    this.draining = true;
    if (this.streams.size > 0)
      this.logger.log(`Draining: closing ${this.streams.size} notification stream(s)`);
    for (const stream of [...this.streams]) stream.close(true);
  }

  onApplicationShutdown(): void {
    this.closeAll();
  }
}
