package io.nereus.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WalConfigTest {

    @Test
    void coalescing_defaultsAndBounds() {
        WalConfig d = WalConfig.defaults();
        assertThat(d.maxCoalescedBatches()).isEqualTo(8);
        assertThat(d.maxCoalescedAppends()).isEqualTo(4096);
        assertThat(d.withCoalescing(1, 1).maxCoalescedBatches()).as("1 turns coalescing off").isEqualTo(1);
        assertThat(d.withCoalescing(64, 16_384).maxCoalescedAppends()).isEqualTo(16_384);
        assertThatThrownBy(() -> d.withCoalescing(0, 4096)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxCoalescedBatches");
        assertThatThrownBy(() -> d.withCoalescing(65, 4096)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> d.withCoalescing(8, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxCoalescedAppends");
        assertThatThrownBy(() -> d.withCoalescing(8, 16_385)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void recovery_defaultsAndBounds() {
        WalConfig d = WalConfig.defaults();
        assertThat(d.writerLease()).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(d.leaseRenewal()).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThat(d.recoveryInterval()).isEqualTo(java.time.Duration.ofSeconds(10));
        assertThatThrownBy(() -> d.withRecovery(java.time.Duration.ofMillis(2), java.time.Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("writerLease");
        assertThatThrownBy(() -> d.withRecovery(java.time.Duration.ofSeconds(1), java.time.Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("recoveryInterval");
        WalConfig c = d.withRecovery(java.time.Duration.ofMillis(3), java.time.Duration.ofMillis(1))
                .withCoalescing(3, 100).withQuorums(1, 1, 1);
        assertThat(c.leaseRenewal()).isEqualTo(java.time.Duration.ofMillis(1));
        assertThat(c.recoveryInterval()).as("kept by the other withers").isEqualTo(java.time.Duration.ofMillis(1));
    }

    @Test
    void otherWithers_keepCoalescing() {
        WalConfig c = WalConfig.defaults().withCoalescing(3, 100).withQuorums(1, 1, 1)
                .withFlush(1024, java.time.Duration.ZERO).withSlice(1 << 20, java.time.Duration.ofMinutes(1));
        assertThat(c.maxCoalescedBatches()).isEqualTo(3);
        assertThat(c.maxCoalescedAppends()).isEqualTo(100);
    }
}
