//! Integration tests: real `redis-server`s, real instances, one test binary.

mod helpers;
mod lab;

mod api_errors;
mod class;
mod cli;
mod cluster;
mod contention;
mod course;
mod dashboard;
mod events;
mod fair;
mod faults;
mod field;
mod fleet_settings;
mod hand_off;
mod history;
mod limits;
mod listener;
mod lock_store;
mod matrix;
mod member;
mod openapi;
mod partitions;
mod poll;
mod postgres_tiers;
mod redis_atomicity;
mod redis_outage;
mod redlock;
mod room_life;
mod rooms;
mod scenarios;
mod topology;
mod up;
mod zookeeper;
mod zookeeper_tiers;
