package io.nereus.stream;

import io.nereus.generation.CollectorConfig;
import io.nereus.generation.MaterializerConfig;
import io.nereus.wal.WalConfig;
import java.util.Objects;

/**
 * Settings of one storage instance; immutable and validated.
 *
 * @param wal                 the WAL writer's settings
 * @param tailCacheBytes      payload bytes of recently committed entries kept in memory
 * @param cachedBatches       decoded WAL batches kept for readers
 * @param cachedResolutions   positive resolutions (index records) kept for readers
 * @param repairMaxEntries    WAL batches one generation-0 repair may read
 * @param materializer        the materializer's settings (higher generations)
 * @param collector           the garbage collector's settings
 */
public record StorageConfig(WalConfig wal, long tailCacheBytes, int cachedBatches, int cachedResolutions,
        int repairMaxEntries, MaterializerConfig materializer, CollectorConfig collector) {
    public StorageConfig {
        Objects.requireNonNull(wal, "wal");
        Objects.requireNonNull(materializer, "materializer");
        Objects.requireNonNull(collector, "collector");
        if (tailCacheBytes < 0 || cachedBatches < 1 || cachedResolutions < 1 || repairMaxEntries < 1) {
            throw new IllegalArgumentException("cache sizes must be >= 0 (tail) and >= 1 (others), repair budget >= 1");
        }
    }

    /**
     * Defaults: 64 MiB tail cache, 64 batches, 100,000 resolutions, repair reads at most 10,000 batches, the
     * materializer's and the collector's {@linkplain MaterializerConfig#defaults defaults}.
     */
    public static StorageConfig defaults() {
        return new StorageConfig(WalConfig.defaults(), 64L << 20, 64, 100_000, 10_000, MaterializerConfig.defaults(),
                CollectorConfig.defaults());
    }

    public StorageConfig withWal(WalConfig w) {
        return new StorageConfig(w, tailCacheBytes, cachedBatches, cachedResolutions, repairMaxEntries, materializer, collector);
    }

    public StorageConfig withTailCacheBytes(long bytes) {
        return new StorageConfig(wal, bytes, cachedBatches, cachedResolutions, repairMaxEntries, materializer, collector);
    }

    public StorageConfig withMaterializer(MaterializerConfig m) {
        return new StorageConfig(wal, tailCacheBytes, cachedBatches, cachedResolutions, repairMaxEntries, m, collector);
    }

    public StorageConfig withCollector(CollectorConfig c) {
        return new StorageConfig(wal, tailCacheBytes, cachedBatches, cachedResolutions, repairMaxEntries, materializer,
                c);
    }

    public StorageConfig withRepairMaxEntries(int n) {
        return new StorageConfig(wal, tailCacheBytes, cachedBatches, cachedResolutions, n, materializer, collector);
    }
}
