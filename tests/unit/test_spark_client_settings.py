"""The Spark Kafka source gets the same credentials as the confluent-kafka clients,
translated to the Java client's settings (the chart sets KAFKA_CLIENT_* once)."""

from kafka_patterns.runtime.spark import java_client_settings


def test_scram_credentials_become_a_jaas_config_and_the_ca_a_pem_truststore():
    out = java_client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                "sasl.username": "one-to-one", "sasl.password": "s3cret",
                                "ssl.ca.location": "/etc/kafka-ca/ca.crt"})
    assert out == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            'username="one-to-one" password="s3cret";',
        "ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/kafka-ca/ca.crt"}


def test_plaintext_has_nothing_to_translate():
    assert java_client_settings({}) == {}
