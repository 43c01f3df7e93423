CREATE TABLE tx_waymark_applied (
	uid int(11) unsigned NOT NULL auto_increment,
	idempotency_key varchar(200) DEFAULT '' NOT NULL,
	result text,
	crdate int(11) unsigned DEFAULT '0' NOT NULL,

	PRIMARY KEY (uid),
	UNIQUE KEY idempotency_key (idempotency_key)
);

CREATE TABLE tx_waymark_nonce (
	uid int(11) unsigned NOT NULL auto_increment,
	nonce varchar(64) DEFAULT '' NOT NULL,
	tstamp int(11) unsigned DEFAULT '0' NOT NULL,

	PRIMARY KEY (uid),
	UNIQUE KEY nonce (nonce),
	KEY tstamp (tstamp)
);
