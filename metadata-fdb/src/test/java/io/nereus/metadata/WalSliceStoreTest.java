package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.fdb.embedded.CommitFault;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Slice registration, state transitions, listing by state and the writer leases of {@link WalSliceStore}. */
@Timeout(120)
class WalSliceStoreTest {
    private static final Duration LEASE = Duration.ofSeconds(30);

    private final StoreFixture f = new StoreFixture();
    private final WalSliceStore slices = f.slices;

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void register_writesOpenSliceAndItsByStateCopy_isIdempotent_andRefusesAnotherWriter() {
        long lease = await(slices.takeLease("broker-a", LEASE));
        WalSlice open = WalSlice.open("broker-a", lease);
        assertThat(await(slices.register(10, "broker-a", lease))).isEqualTo(new SliceRegistration.Registered(open));
        assertThat(await(slices.slice(10))).contains(open);
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).containsExactly(Map.entry(10L, open));
        assertThat(await(slices.register(10, "broker-a", lease))).as("a retried registration")
                .isEqualTo(new SliceRegistration.Registered(open));

        long other = await(slices.takeLease("broker-b", LEASE));
        assertThat(other).isGreaterThan(lease);
        assertThat(await(slices.register(10, "broker-b", other))).isEqualTo(new SliceRegistration.Taken(open));
        await(slices.seal(10));
        assertThat(await(slices.register(10, "broker-a", lease))).as("a sealed slice is never reopened")
                .isEqualTo(new SliceRegistration.Taken(open.withState(WalSliceState.SEALED)));
        assertThat(await(slices.slice(10))).contains(open.withState(WalSliceState.SEALED));
    }

    @Test
    void register_withoutLease_writesNothing() {
        assertThat(await(slices.register(5, "broker-a", 77))).isEqualTo(new SliceRegistration.LeaseGone(77));
        long lease = await(slices.takeLease("broker-a", LEASE));
        await(slices.releaseLease(lease));
        assertThat(await(slices.register(6, "broker-a", lease))).isEqualTo(new SliceRegistration.LeaseGone(lease));
        assertThat(await(slices.slice(5))).isEmpty();
        assertThat(await(slices.slice(6))).isEmpty();
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).isEmpty();
    }

    @Test
    void transition_followsTheTable_movesTheByStateCopy_andSameStateIsANoOp() {
        long lease = await(slices.takeLease("broker-a", LEASE));
        await(slices.register(1, "broker-a", lease));
        await(slices.register(2, "broker-a", lease));
        WalSlice open = WalSlice.open("broker-a", lease);
        WalSlice sealed = open.withState(WalSliceState.SEALED);

        assertThatThrownBy(() -> await(slices.transition(1, WalSliceState.COLLECTING)))
                .isInstanceOf(IllegalStateException.class).hasMessage("WAL slice state cannot go from OPEN to COLLECTING");
        assertThat(await(slices.slice(1))).as("a refused move writes nothing").contains(open);

        assertThat(await(slices.seal(1))).contains(sealed);
        assertThat(await(slices.seal(1))).as("sealing twice").contains(sealed);
        assertThat(await(slices.transition(2, WalSliceState.OPEN))).contains(open);
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).containsOnlyKeys(2L);
        assertThat(await(slices.slices(WalSliceState.SEALED, 0, 100))).containsExactly(Map.entry(1L, sealed));

        assertThatThrownBy(() -> await(slices.transition(1, WalSliceState.OPEN)))
                .isInstanceOf(IllegalStateException.class).hasMessage("WAL slice state cannot go from SEALED to OPEN");
        WalSlice deletable = sealed.withState(WalSliceState.COLLECTING);
        assertThat(await(slices.transition(1, WalSliceState.COLLECTING))).contains(deletable);
        assertThat(await(slices.slices(WalSliceState.SEALED, 0, 100))).isEmpty();
        assertThat(await(slices.slices(WalSliceState.COLLECTING, 0, 100))).containsExactly(Map.entry(1L, deletable));
        assertThat(await(slices.transition(99, WalSliceState.SEALED))).as("no such slice").isEmpty();
        assertThat(await(slices.slice(99))).isEmpty();
    }

    @Test
    void seal_retriedAfterUnknownResult_sealsOnce() {
        long lease = await(slices.takeLease("broker-a", LEASE));
        await(slices.register(3, "broker-a", lease));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        assertThat(await(slices.seal(3))).contains(new WalSlice(WalSliceState.SEALED, "broker-a", lease));
        assertThat(await(slices.slices(WalSliceState.SEALED, 0, 100))).containsOnlyKeys(3L);
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).isEmpty();

        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        assertThat(await(slices.register(4, "broker-a", lease))).isInstanceOf(SliceRegistration.Registered.class);
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).containsOnlyKeys(4L);
    }

    @Test
    void slices_areListedByIdInPages() {
        long lease = await(slices.takeLease("broker-a", LEASE));
        for (long id : new long[] {40, 3, 17, 8}) {
            await(slices.register(id, "broker-a", lease));
        }
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 2))).containsOnlyKeys(3L, 8L);
        assertThat(await(slices.slices(WalSliceState.OPEN, 9, 2))).containsOnlyKeys(17L, 40L);
        assertThat(await(slices.slices(WalSliceState.OPEN, 41, 2))).isEmpty();
        assertThatThrownBy(() -> await(slices.slices(WalSliceState.OPEN, 0, 0))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void leases_takeRenewAndRelease() {
        long a = await(slices.takeLease("broker-a", LEASE));
        long b = await(slices.takeLease("broker-a", Duration.ofSeconds(9)));
        assertThat(b).as("a restarted writer gets a new incarnation").isEqualTo(a + 1);
        assertThat(await(slices.lease(a))).contains(new WalWriterLease("broker-a", 0, LEASE));
        assertThat(await(slices.renewLease(a))).isTrue();
        assertThat(await(slices.renewLease(a))).isTrue();
        assertThat(await(slices.lease(a))).contains(new WalWriterLease("broker-a", 2, LEASE));
        await(slices.releaseLease(a));
        await(slices.releaseLease(a));
        assertThat(await(slices.lease(a))).isEmpty();
        assertThat(await(slices.renewLease(a))).as("a released lease is not revived").isFalse();
        assertThat(await(slices.lease(a))).isEmpty();
        assertThat(await(slices.census()).leases()).containsExactly(
                Map.entry(b, new WalWriterLease("broker-a", 0, Duration.ofSeconds(9))));
    }

    @Test
    void expireLease_onlyWhenNotRenewedAndNoSliceOfItIsOpen() {
        long dead = await(slices.takeLease("broker-a", LEASE));
        long live = await(slices.takeLease("broker-b", LEASE));
        await(slices.register(1, "broker-a", dead));
        await(slices.register(2, "broker-b", live));
        assertThat(await(slices.expireLease(dead, 0))).as("its slice 1 is still OPEN").isFalse();
        await(slices.seal(1));
        await(slices.renewLease(dead));
        assertThat(await(slices.expireLease(dead, 0))).as("renewed since it was observed").isFalse();
        assertThat(await(slices.lease(dead))).isPresent();
        assertThat(await(slices.expireLease(dead, 1))).isTrue();
        assertThat(await(slices.lease(dead))).isEmpty();
        assertThat(await(slices.expireLease(dead, 1))).as("already gone").isTrue();
        assertThat(await(slices.lease(live))).as("another writer's lease is untouched").isPresent();
        assertThat(await(slices.slice(2))).contains(WalSlice.open("broker-b", live));
    }

    @Test
    void census_readsOpenSlicesAndLeasesTogether() {
        long a = await(slices.takeLease("broker-a", LEASE));
        long b = await(slices.takeLease("broker-b", LEASE));
        await(slices.register(7, "broker-a", a));
        await(slices.register(8, "broker-b", b));
        await(slices.register(9, "broker-b", b));
        await(slices.seal(8));
        await(slices.releaseLease(a));
        SliceCensus census = await(slices.census());
        SortedMap<Long, WalSlice> open = new TreeMap<>(Map.of(7L, WalSlice.open("broker-a", a),
                9L, WalSlice.open("broker-b", b)));
        assertThat(census.open()).isEqualTo(open);
        assertThat(census.leases()).containsOnlyKeys(b);
        assertThat(Optional.ofNullable(census.leases().get(a))).as("slice 7 has no lease: abandoned").isEmpty();
    }
}
