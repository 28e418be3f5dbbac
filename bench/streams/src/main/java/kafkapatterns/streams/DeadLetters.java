package kafkapatterns.streams;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Dead letters as kafka_patterns.runtime.dead_letters makes them: the record's key,
 * value and headers (without a letter's own), then the letter's headers (its reason and
 * where it came from); cut to a prefix with the truncation headers when it would not fit
 * a produce request.
 */
public final class DeadLetters {
    static final List<String> HEADERS = List.of("reason", "source.topic", "source.partition", "source.offset", "job");
    static final List<String> TRUNCATION = List.of("truncated", "original.size", "original.sha256");
    static final String STORED = "stored";
    static final int LETTER_BUDGET = 1_000_000 - 16_384;
    static final int PREFIX_BYTES = 4096;

    private DeadLetters() {}

    public static Record<byte[], byte[]> letter(Record<byte[], byte[]> record, RecordMetadata source, String reason,
                                                String job) {
        Headers carried = new RecordHeaders();
        for (Header h : record.headers()) {
            if (!HEADERS.contains(h.key()) && !TRUNCATION.contains(h.key()) && !STORED.equals(h.key())) {
                carried.add(h.key(), h.value());
            }
        }
        String[] values = {reason, source.topic(), String.valueOf(source.partition()), String.valueOf(source.offset()),
                           job};
        Headers own = new RecordHeaders();
        for (int i = 0; i < values.length; i++) {
            own.add(HEADERS.get(i), values[i].getBytes(StandardCharsets.UTF_8));
        }
        byte[] key = record.key();
        byte[] value = record.value();
        if (length(key) + length(value) + size(carried) + size(own) <= LETTER_BUDGET) {
            return record.withHeaders(concat(carried, own));
        }
        Headers kept = size(carried) <= PREFIX_BYTES ? carried : new RecordHeaders();
        Headers truncation = new RecordHeaders();
        truncation.add(TRUNCATION.get(0), "true".getBytes(StandardCharsets.UTF_8));
        truncation.add(TRUNCATION.get(1), String.valueOf(length(value)).getBytes(StandardCharsets.UTF_8));
        truncation.add(TRUNCATION.get(2), sha256(value == null ? new byte[0] : value).getBytes(StandardCharsets.UTF_8));
        return record.withKey(prefix(key)).withValue(prefix(value)).withHeaders(concat(kept, own, truncation));
    }

    private static int length(byte[] bytes) {
        return bytes == null ? 0 : bytes.length;
    }

    private static int size(Headers headers) {
        int n = 0;
        for (Header h : headers) {
            n += h.key().getBytes(StandardCharsets.UTF_8).length + length(h.value());
        }
        return n;
    }

    private static Headers concat(Headers... parts) {
        Headers all = new RecordHeaders();
        for (Headers part : parts) {
            for (Header h : part) {
                all.add(h);
            }
        }
        return all;
    }

    private static byte[] prefix(byte[] bytes) {
        return bytes == null ? null : Arrays.copyOf(bytes, Math.min(bytes.length, PREFIX_BYTES));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
