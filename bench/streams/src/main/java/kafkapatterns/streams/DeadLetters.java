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
 * a produce request. The header names, the budget and the prefix are dead_letters.py's,
 * read from the rules file (Rules.Letters).
 */
public final class DeadLetters {
    private final Rules.Letters rules;

    public DeadLetters(Rules.Letters rules) {
        this.rules = rules;
    }

    public Record<byte[], byte[]> letter(Record<byte[], byte[]> record, RecordMetadata source, String reason,
                                         String job) {
        List<String> headers = rules.headers();
        List<String> truncation = rules.truncation();
        Headers carried = new RecordHeaders();
        for (Header h : record.headers()) {
            if (!headers.contains(h.key()) && !truncation.contains(h.key()) && !rules.stored().equals(h.key())) {
                carried.add(h.key(), h.value());
            }
        }
        // In the order of the names: the reason, the source's topic, partition and offset, the job.
        String[] values = {reason, source.topic(), String.valueOf(source.partition()), String.valueOf(source.offset()),
                           job};
        Headers own = new RecordHeaders();
        for (int i = 0; i < values.length; i++) {
            own.add(headers.get(i), values[i].getBytes(StandardCharsets.UTF_8));
        }
        byte[] key = record.key();
        byte[] value = record.value();
        if (length(key) + length(value) + size(carried) + size(own) <= rules.letterBudget()) {
            return record.withHeaders(concat(carried, own));
        }
        Headers kept = size(carried) <= rules.prefixBytes() ? carried : new RecordHeaders();
        Headers cut = new RecordHeaders();
        cut.add(truncation.get(0), "true".getBytes(StandardCharsets.UTF_8));
        cut.add(truncation.get(1), String.valueOf(length(value)).getBytes(StandardCharsets.UTF_8));
        cut.add(truncation.get(2), sha256(value == null ? new byte[0] : value).getBytes(StandardCharsets.UTF_8));
        return record.withKey(prefix(key)).withValue(prefix(value)).withHeaders(concat(kept, own, cut));
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

    private byte[] prefix(byte[] bytes) {
        return bytes == null ? null : Arrays.copyOf(bytes, Math.min(bytes.length, rules.prefixBytes()));
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
