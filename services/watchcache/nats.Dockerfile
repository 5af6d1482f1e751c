# podline/nats: nats-server built from its Go module (tools/nats, `make
# tools`), FROM scratch. JetStream keeps the apiserver's watch stream in
# /data, a volume in compose. The image has no shell: its healthcheck runs
# podline-probe against the monitoring port's /healthz.
FROM scratch
COPY nats-server /usr/local/bin/nats-server
COPY podline-probe /usr/local/bin/podline-probe
EXPOSE 4222 8222
ENTRYPOINT ["/usr/local/bin/nats-server"]
CMD ["-js", "-sd", "/data", "-m", "8222"]
