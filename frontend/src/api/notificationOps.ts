// Notification channels (Settings → Notifications): where a workspace's notifications go; URLs are never read back.
import { graphql } from "../gql";
import type { NotificationChannelsQuery } from "../gql/graphql";

export const NOTIFICATION_CHANNELS = graphql(`
  query NotificationChannels($w: ID!) {
    notificationChannels(workspaceId: $w) {
      id
      name
      service
      target
      events
      enabled
      status
      lastAttemptAt
      lastDeliveredAt
      lastError
      lastDurationMs
      pendingDeliveries
      failedDeliveries
    }
  }
`);

export const CREATE_NOTIFICATION_CHANNEL = graphql(`
  mutation CreateNotificationChannel($i: CreateNotificationChannelInput!) {
    createNotificationChannel(input: $i) {
      __typename
      ...ErrorFields
      ... on NotificationChannelPayload {
        channel {
          id
        }
      }
    }
  }
`);

export const UPDATE_NOTIFICATION_CHANNEL = graphql(`
  mutation UpdateNotificationChannel($i: UpdateNotificationChannelInput!) {
    updateNotificationChannel(input: $i) {
      __typename
      ...ErrorFields
      ... on NotificationChannelPayload {
        channel {
          id
        }
      }
    }
  }
`);

export const DELETE_NOTIFICATION_CHANNEL = graphql(`
  mutation DeleteNotificationChannel($id: ID!) {
    deleteNotificationChannel(id: $id) {
      __typename
      ...ErrorFields
      ... on NotificationChannelPayload {
        channel {
          id
        }
      }
    }
  }
`);

export const TEST_NOTIFICATION_CHANNEL = graphql(`
  mutation TestNotificationChannel($id: ID!) {
    testNotificationChannel(id: $id) {
      __typename
      ...ErrorFields
      ... on TestNotificationPayload {
        delivered
        error
      }
    }
  }
`);

export type ChannelRow = NotificationChannelsQuery["notificationChannels"][number];
