# podline/nats: nats-server built from its Go module (tools/nats, `make
# tools`), FROM scratch, with podline's configuration (nats.conf): TLS with
# client certificates on 4222, the pair and CA mounted at /etc/nats/pki
# (`make certs`: .podline/pki/nats), JetStream keeping the apiserver's
# watch stream in /data, a volume in compose. The image has no shell: its
# healthcheck runs podline-probe against the monitoring port's /healthz,
# which listens on loopback only.
FROM scratch
COPY nats-server /usr/local/bin/nats-server
COPY podline-probe /usr/local/bin/podline-probe
COPY nats.conf /etc/nats/nats.conf
EXPOSE 4222
ENTRYPOINT ["/usr/local/bin/nats-server"]
CMD ["-c", "/etc/nats/nats.conf", "-sd", "/data"]
