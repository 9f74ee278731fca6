package io.nereus.it;

import java.util.Locale;

/**
 * Which managed-ledger storage the test broker runs, chosen by the system property {@value #PROPERTY}:
 * {@code nereus} (the default) or {@code bookkeeper} (stock Pulsar, to prove the tests against stock behaviour).
 */
public enum StorageMode {
    /** {@code io.nereus.pulsar.NereusManagedLedgerStorage}. */
    NEREUS("io.nereus.pulsar.NereusManagedLedgerStorage"),
    /** Pulsar's own {@code ManagedLedgerClientFactory}. */
    BOOKKEEPER("org.apache.pulsar.broker.ManagedLedgerClientFactory");

    /** System property selecting the storage. */
    public static final String PROPERTY = "nereus.it.storage";

    private final String storageClassName;

    StorageMode(String storageClassName) {
        this.storageClassName = storageClassName;
    }

    /** The value of {@code managedLedgerStorageClassName} for this mode. */
    public String storageClassName() {
        return storageClassName;
    }

    /** The mode named by {@value #PROPERTY}; {@link #NEREUS} when it is unset or blank. */
    public static StorageMode current() {
        String value = System.getProperty(PROPERTY, "").trim();
        if (value.isEmpty()) {
            return NEREUS;
        }
        for (StorageMode mode : values()) {
            if (mode.name().toLowerCase(Locale.ROOT).equals(value.toLowerCase(Locale.ROOT))) {
                return mode;
            }
        }
        throw new IllegalArgumentException(
                "System property " + PROPERTY + "='" + value + "' is not one of: nereus, bookkeeper");
    }
}
